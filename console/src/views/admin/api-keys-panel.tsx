/** A user's API keys (the keys themselves are never shown again), a page at a time, newest first: list, revoke, create. */
import { useId, useState } from "react";
import { errorText } from "../../api/client";
import { useUser } from "../../auth/session";
import { Confirm } from "../../ui/confirm";
import { ErrorLine, Loading } from "../../ui/page";
import { Time } from "../../ui/time";
import { Pager } from "../dags/pager";
import { ApiKeyCreate } from "./api-key-create";
import { useReturnFocus } from "./return-focus";
import { useApiKeyMutations, useApiKeys, type ApiKeyRow } from "./use-api-keys";

/** `userId` null: the logged-in user's own keys. */
export function ApiKeysPanel({ userId, ownerName, headingId }: { userId: string | null; ownerName: string; headingId: string }) {
  const session = useUser();
  const list = useApiKeys(userId);
  const { keys, error, refresh } = list;
  const hideId = useId();
  const m = useApiKeyMutations();
  const focus = useReturnFocus(() => document.getElementById(headingId));
  const [revoking, setRevoking] = useState<ApiKeyRow | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [failed, setFailed] = useState<string | null>(null);

  async function revoke(k: ApiKeyRow) {
    setRevoking(null);
    const r = await m.revoke(k.id);
    if (r.error) {
      setDone(null);
      setFailed(errorText(r.error));
    } else {
      setFailed(null);
      setDone(`Revoked the API key “${k.name}” (${k.prefix}…).`);
    }
    refresh();
    focus.restore();
  }

  return (
    <div className="admin-keys">
      {done && <p role="status" className="admin-done">{done}</p>}
      <ErrorLine error={failed} />
      <ErrorLine error={error} />
      <label htmlFor={hideId}>
        <input id={hideId} type="checkbox" checked={list.hideRevoked} onChange={(e) => list.setHideRevoked(e.target.checked)} /> Hide revoked keys
      </label>
      {!keys ? (
        !error && <Loading what="Loading the API keys" />
      ) : keys.length === 0 && list.page === 1 ? (
        <p className="muted">{ownerName} has no {list.hideRevoked ? "API keys that are not revoked" : "API keys"}.</p>
      ) : (
        <div className="table-wrap">
          <table aria-label={`API keys of ${ownerName}`}>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Scope</th>
                <th scope="col">State</th>
                <th scope="col" className="hide-narrow">Last used</th>
                <th scope="col" className="hide-narrow">Created</th>
                <th scope="col"><span className="admin-sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr key={k.id} data-key={k.prefix}>
                  <th scope="row" className="admin-name">
                    {k.name}
                    <code className="admin-sub">{k.prefix}…</code>
                  </th>
                  <td>{k.scope === "READ_ONLY" ? "read only" : "read and write"}</td>
                  <td><KeyState k={k} /></td>
                  <td className="hide-narrow">{k.lastUsedAt ? <Time iso={k.lastUsedAt} mode="relative" /> : <span className="muted">never</span>}</td>
                  <td className="hide-narrow"><Time iso={k.createdAt} /></td>
                  <td>
                    {!k.revokedAt && (
                      <button
                        type="button"
                        aria-label={`Revoke ${k.name}`}
                        onClick={() => {
                          focus.remember();
                          setRevoking(k);
                        }}
                      >
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager label={`API keys pages of ${ownerName}`} page={list.page} hasPrev={list.hasPrev} hasNext={list.hasNext} onPrev={list.prev} onNext={list.next} prev="Newer" next="Older" />
      {revoking && (
        <Confirm
          open
          title={`Revoke the API key “${revoking.name}”?`}
          confirmLabel={`Revoke ${revoking.name}`}
          danger
          onConfirm={() => void revoke(revoking)}
          onCancel={() => {
            setRevoking(null);
            focus.restore();
          }}
        >
          <p>
            The key <code>{revoking.prefix}…</code> of {ownerName} stops working at once, also for connections already open. This cannot be undone.
          </p>
        </Confirm>
      )}
      {session.via === "password" ? (
        <ApiKeyCreate userId={userId} ownerName={ownerName} onCreated={refresh} />
      ) : (
        <p className="muted">You are logged in with an API key: log in with your password to create API keys.</p>
      )}
    </div>
  );
}

function KeyState({ k }: { k: ApiKeyRow }) {
  if (k.revokedAt) return <span><span className="badge tone-muted">revoked</span> <Time iso={k.revokedAt} mode="relative" /></span>;
  if (k.expiresAt && Date.parse(k.expiresAt) <= Date.now()) return <span><span className="badge tone-bad">expired</span> <Time iso={k.expiresAt} mode="relative" /></span>;
  return (
    <span>
      <span className="badge tone-ok">active</span>{" "}
      {k.expiresAt ? <span className="muted">expires <Time iso={k.expiresAt} mode="relative" /></span> : <span className="muted">no expiry</span>}
    </span>
  );
}
