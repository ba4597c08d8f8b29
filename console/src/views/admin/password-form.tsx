/**
 * Changes the logged-in user's password. The API revokes every earlier token (this session's
 * too) and answers a fresh one, which becomes this session's credential at once.
 */
import { useState, type FormEvent } from "react";
import { useMutation } from "urql";
import { ConsoleChangePasswordDocument } from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";
import { useSession, useUser } from "../../auth/session";
import { ErrorLine } from "../../ui/page";

export function PasswordForm() {
  const session = useUser();
  const { logIn } = useSession();
  const [, change] = useMutation(ConsoleChangePasswordDocument);
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [again, setAgain] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string | null>(null);

  if (session.via !== "password") {
    return <p className="muted">You are logged in with an API key: log in with your password to change it.</p>;
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (next !== again) return setError("The new passwords differ.");
    setError(null);
    setDone(null);
    setBusy(true);
    const r = await change({ currentPassword: current, newPassword: next });
    setBusy(false);
    if (r.error || !r.data) return setError(errorText(r.error) ?? "The password was not changed");
    const { token, expiresAt, user } = r.data.changePassword;
    // A new credential: the session (and its API client) switch to it; the old one is revoked.
    logIn({ credential: token, via: "password", user, expiresAt});
    setCurrent("");
    setNext("");
    setAgain("");
    setDone("Password changed. Your other sessions were logged out; this one continues.");
  }

  return (
    <form className="admin-form" onSubmit={submit} aria-labelledby="password-title">
      <div className="admin-fields">
        <input type="text" name="username" autoComplete="username" value={session.user.username} readOnly hidden />
        <label>
          Current password
          <input name="current-password" type="password" required autoComplete="current-password" value={current} onChange={(e) => setCurrent(e.target.value)} />
        </label>
        <label>
          New password
          <input name="new-password" type="password" required minLength={8} maxLength={256} autoComplete="new-password" value={next} onChange={(e) => setNext(e.target.value)} aria-describedby="password-hint" />
        </label>
        <label>
          New password again
          <input name="new-password-again" type="password" required autoComplete="new-password" value={again} onChange={(e) => setAgain(e.target.value)} />
        </label>
        <button type="submit" className="primary" disabled={busy}>{busy ? "Changing…" : "Change password"}</button>
      </div>
      <p id="password-hint" className="hint">8–256 characters, not your user name, not a very common password. Every other session of yours is logged out.</p>
      <ErrorLine error={error} />
      {done && <p role="status" className="admin-done">{done}</p>}
    </form>
  );
}
