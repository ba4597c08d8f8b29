/**
 * Lifts a login lockout (or growing wait) of a user name and/or a client address. The API has no
 * query that lists current lockouts, so the administrator names what to unlock (the locked-out
 * user's message or the API's log says which); the API answers whether there was anything to lift.
 */
import { useState, type FormEvent } from "react";
import { useMutation } from "urql";
import { ConsoleAdminUnlockLoginDocument } from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";
import { ErrorLine } from "../../ui/page";

export function UnlockForm() {
  const [, unlock] = useMutation(ConsoleAdminUnlockLoginDocument);
  const [username, setUsername] = useState("");
  const [address, setAddress] = useState("");
  const [answer, setAnswer] = useState<{ lifted: boolean; what: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const u = username.trim();
    const a = address.trim();
    setAnswer(null);
    if (!u && !a) return setError("Give a user name, a client address, or both.");
    setError(null);
    setBusy(true);
    const r = await unlock({ username: u || null, address: a || null });
    setBusy(false);
    if (r.error || r.data == null) return setError(errorText(r.error) ?? "The API did not answer");
    const what = [u && `user “${u}”`, a && `address ${a}`].filter(Boolean).join(" and ");
    setAnswer({ lifted: r.data.unlockLogin, what });
  }

  return (
    <form className="admin-form" onSubmit={submit} aria-labelledby="unlock-title" aria-describedby="unlock-hint">
      <p id="unlock-hint" className="hint">
        After repeated failed logins the API makes a user name or a client address wait, then locks it out for a while. Lift it here; its failed attempts are
        forgotten too. The API does not list current lockouts: the refused user sees “locked out” when logging in.
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
  );
}
