/**
 * The users, a page at a time by name (a name prefix narrows them): role, state and limit, with
 * enable/disable, the concurrency limit, token revocation and deletion.
 */
import { useId, useRef, useState } from "react";
import type { DeletedUserJobs } from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";
import { useUser } from "../../auth/session";
import { ErrorLine, Loading } from "../../ui/page";
import { Time } from "../../ui/time";
import { Pager } from "../dags/pager";
import { ConcurrencyEditor } from "./concurrency-editor";
import { useReturnFocus } from "./return-focus";
import { UserConfirm, type UserAction } from "./user-confirm";
import { UserCreateForm } from "./user-create-form";
import { useUserMutations, type AdminUser, type UsersPage } from "./use-users";

/** `list`: the page of users shown (AdminView's, which its "Whose keys" choice shares). */
export function UsersPanel({ list, onShowKeys }: { list: UsersPage; onShowKeys(user: AdminUser): void }) {
  const me = useUser().user;
  const { users, error, refresh } = list;
  const findId = useId();
  const m = useUserMutations();
  const heading = useRef<HTMLHeadingElement>(null);
  const focus = useReturnFocus(() => heading.current);
  const [pending, setPending] = useState<{ action: UserAction; user: AdminUser } | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [failed, setFailed] = useState<string | null>(null);

  function report(ok: string, err: Parameters<typeof errorText>[0]) {
    if (err) {
      setDone(null);
      setFailed(errorText(err));
    } else {
      setFailed(null);
      setDone(ok);
    }
    refresh();
  }

  function ask(action: UserAction, user: AdminUser) {
    focus.remember();
    setPending({ action, user });
  }

  async function confirmed(action: UserAction, user: AdminUser, jobs: DeletedUserJobs) {
    setPending(null);
    const name = user.username;
    if (action === "disable") {
      const r = await m.disable(user.id);
      report(`Disabled ${name}: their sessions and API keys are refused.`, r.error);
    } else if (action === "revoke") {
      const r = await m.revokeTokens(user.id);
      report(`Revoked every login token of ${name}.`, r.error);
    } else {
      const r = await m.remove(user.id, jobs);
      const d = r.data?.deleteUser;
      report(
        d
          ? `Deleted ${name}: ${d.jobsKept} ${d.jobsKept === 1 ? "job" : "jobs"} kept (paused), ${d.jobsDeleted} deleted; ${d.runsCancelled} open ${d.runsCancelled === 1 ? "run" : "runs"} cancelled; ${d.apiKeysDeleted} API ${d.apiKeysDeleted === 1 ? "key" : "keys"}, ${d.dagsDeleted} ${d.dagsDeleted === 1 ? "DAG" : "DAGs"} and ${d.dagRunsDeleted} DAG ${d.dagRunsDeleted === 1 ? "run" : "runs"} deleted.`
          : "",
        r.error,
      );
    }
    focus.restore();
  }

  async function enable(user: AdminUser) {
    const r = await m.enable(user.id);
    report(`Enabled ${user.username}: they can log in again.`, r.error);
  }

  return (
    <section className="card admin-section" aria-labelledby="users-title">
      <h2 id="users-title" ref={heading} tabIndex={-1}>Users</h2>
      <ErrorLine error={error} />
      {done && <p role="status" className="admin-done">{done}</p>}
      <ErrorLine error={failed} />
      <label className="admin-whose" htmlFor={findId}>
        Find users whose name starts with
        <input id={findId} type="search" value={list.prefix} onChange={(e) => list.setPrefix(e.target.value)} autoComplete="off" spellCheck={false} />
      </label>
      {!users ? (
        !error && <Loading what="Loading the users" />
      ) : users.length === 0 ? (
        <p className="muted">{list.prefix.trim() ? `No user's name starts with “${list.prefix.trim()}”.` : "No users."}</p>
      ) : (
        <div className="table-wrap">
          <table aria-labelledby="users-title">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">State</th>
                <th scope="col">Concurrent runs</th>
                <th scope="col" className="hide-narrow">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {users.map((u) => {
                const self = u.id === me.id;
                return (
                  <tr key={u.id} data-user={u.username}>
                    <th scope="row" className="admin-name">
                      {u.username}
                      {self && <span className="muted"> (you)</span>}
                      <span className="admin-sub">{u.role === "ADMIN" ? "administrator" : "user"}</span>
                    </th>
                    <td>
                      <span className={`badge tone-${u.disabled ? "bad" : "ok"}`}>{u.disabled ? "disabled" : "active"}</span>
                    </td>
                    <td>
                      {editing === u.id ? (
                        <ConcurrencyEditor
                          user={u}
                          onSave={async (limit) => {
                            const r = await m.setLimit(u.id, limit);
                            if (!r.error) setEditing(null);
                            report(`${u.username}: ${limit === null ? "no concurrency limit" : `at most ${limit} runs at once`}.`, r.error);
                          }}
                          onCancel={() => setEditing(null)}
                        />
                      ) : (
                        <span className="admin-limit">
                          {u.maxConcurrentRuns ?? <span className="muted">no limit</span>}
                          <button type="button" className="admin-small-button" aria-label={`Set limit of ${u.username}`} onClick={() => setEditing(u.id)}>Set limit</button>
                        </span>
                      )}
                    </td>
                    <td className="hide-narrow"><Time iso={u.createdAt} /></td>
                    <td>
                      <div className="actions admin-row-actions">
                        <button type="button" aria-label={`API keys of ${u.username}`} onClick={() => onShowKeys(u)}>API keys</button>
                        {!self &&
                          (u.disabled ? (
                            <button type="button" aria-label={`Enable ${u.username}`} onClick={() => void enable(u)}>Enable</button>
                          ) : (
                            <button type="button" aria-label={`Disable ${u.username}`} onClick={() => ask("disable", u)}>Disable</button>
                          ))}
                        <button type="button" aria-label={`Revoke tokens of ${u.username}`} onClick={() => ask("revoke", u)}>Revoke tokens</button>
                        {!self && <button type="button" className="admin-danger-text" aria-label={`Delete ${u.username}`} onClick={() => ask("delete", u)}>Delete</button>}
                      </div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Pager label="Users pages" page={list.page} hasPrev={list.hasPrev} hasNext={list.hasNext} onPrev={list.prev} onNext={list.next} />
      {pending && (
        <UserConfirm
          pending={pending}
          onConfirm={(a, u, jobs) => void confirmed(a, u, jobs)}
          onCancel={() => {
            setPending(null);
            focus.restore();
          }}
        />
      )}
      <UserCreateForm
        onCreated={(name) => {
          setFailed(null);
          setDone(`Created user ${name}.`);
          refresh();
        }}
      />
    </section>
  );
}
