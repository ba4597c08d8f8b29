/**
 * Current login waits and lockouts (loginLockouts: user names and client addresses, latest-ending
 * first, 100 a page) with an Unlock button per row, and a form that lifts one by name or address;
 * the API answers whether there was anything to lift. The page is read again after each unlock and
 * on Refresh.
 */
import { useState, type FormEvent } from "react";
import { useMutation, useQuery } from "urql";
import { ConsoleAdminLoginLockoutsDocument, ConsoleAdminUnlockLoginDocument } from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";
import { ErrorLine, Loading } from "../../ui/page";
import { useCursorStack } from "../../ui/paging";
import { Pager } from "../dags/pager";
import { Time } from "../../ui/time";

/** Lockouts a page. */
export const LOCKOUTS_PAGE = 100;

export function UnlockForm() {
  const [, unlock] = useMutation(ConsoleAdminUnlockLoginDocument);
  const [username, setUsername] = useState("");
  const [address, setAddress] = useState("");
  const [answer, setAnswer] = useState<{ lifted: boolean; what: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const pages = useCursorStack();
  const [list, reexecute] = useQuery({
    query: ConsoleAdminLoginLockoutsDocument,
    variables: { first: LOCKOUTS_PAGE, after: pages.after },
    requestPolicy: "network-only",
    context: LIST_CONTEXT,
  });
  const refresh = () => reexecute({ requestPolicy: "network-only" });
  const conn = list.data?.loginLockouts ?? null;
  const rows = conn ? conn.edges.map((e) => e.node) : null;

  async function lift(u: string, a: string) {
    setAnswer(null);
    setError(null);
    setBusy(true);
    const r = await unlock({ username: u || null, address: a || null });
    setBusy(false);
    refresh();
    if (r.error || r.data == null) return setError(errorText(r.error) ?? "The API did not answer");
    const what = [u && `user “${u}”`, a && `address ${a}`].filter(Boolean).join(" and ");
    setAnswer({ lifted: r.data.unlockLogin, what });
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    const u = username.trim();
    const a = address.trim();
    setAnswer(null);
    if (!u && !a) return setError("Give a user name, a client address, or both.");
    await lift(u, a);
  }

  return (
    <>
    <div className="admin-lockouts">
      <ErrorLine error={list.error ? errorText(list.error) ?? "The API did not answer" : null} />
      {!rows ? (
        !list.error && <Loading what="Loading the login lockouts" />
      ) : rows.length === 0 && !pages.hasPrev ? (
        <p className="muted">No user name or client address must wait to log in now.</p>
      ) : (
        <div className="table-wrap">
          <table aria-label="Current login lockouts">
            <thead>
              <tr>
                <th scope="col">User name or address</th>
                <th scope="col">Until</th>
                <th scope="col" className="hide-narrow">Failed logins</th>
                <th scope="col"><span className="admin-sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => {
                const what = r.dimension === "USER" ? `user “${r.key}”` : `address ${r.key}`;
                return (
                  <tr key={`${r.dimension}:${r.key}`} data-lockout={r.key}>
                    <th scope="row" className="admin-name">
                      {r.key}
                      <span className="admin-sub">{r.dimension === "USER" ? "user name" : "client address"}</span>
                    </th>
                    <td><Time iso={r.until} /></td>
                    <td className="hide-narrow">{r.failures ?? "—"}</td>
                    <td>
                      <button type="button" disabled={busy} aria-label={`Unlock ${what}`} onClick={() => void (r.dimension === "USER" ? lift(r.key, "") : lift("", r.key))}>
                        Unlock
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Pager label="Login lockouts pages" page={pages.page} hasPrev={pages.hasPrev} hasNext={conn?.pageInfo.hasNextPage ?? false} onPrev={pages.prev} onNext={() => pages.next(conn?.pageInfo)} />
      <button type="button" onClick={refresh}>Refresh list</button>
    </div>
    <form className="admin-form" onSubmit={submit} aria-labelledby="unlock-title" aria-describedby="unlock-hint">
      <p id="unlock-hint" className="hint">
        After repeated failed logins the API makes a user name or a client address wait, then locks it out for a while. Lift it here; its failed attempts are
        forgotten too. Current ones are listed above; a name or address can also be given here.
      </p>
      <div className="admin-fields">
        <label>
          User name
          <input name="unlock-username" autoComplete="off" value={username} onChange={(e) => setUsername(e.target.value)} />
        </label>
        <label>
          Client address
          <input name="unlock-address" autoComplete="off" placeholder="e.g. 203.0.113.7" value={address} onChange={(e) => setAddress(e.target.value)} />
        </label>
        <button type="submit" className="primary" disabled={busy}>{busy ? "Unlocking…" : "Unlock"}</button>
      </div>
      <ErrorLine error={error} />
      <p role="status" className={answer ? "admin-done" : undefined}>
        {answer && (answer.lifted ? `Lifted: ${answer.what} may log in again now.` : `Nothing to lift: ${answer.what} had no lockout, wait or failed logins recorded.`)}
      </p>
    </form>
    </>
  );
}

// An empty list names no type, so the document cache would not know an unlock changes it.
const LIST_CONTEXT = { additionalTypenames: ["LoginLockout"] };
