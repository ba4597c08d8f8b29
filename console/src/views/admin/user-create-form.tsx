/** An administrator creates a user: name, first password, role and an optional concurrency limit. */
import { useState, type FormEvent } from "react";
import type { Role } from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";
import { ErrorLine } from "../../ui/page";
import { useUserMutations } from "./use-users";

export function UserCreateForm({ onCreated }: { onCreated(username: string): void }) {
  const m = useUserMutations();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState<Role>("USER");
  const [limit, setLimit] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    setBusy(true);
    const r = await m.create({ username: username.trim(), password, role, maxConcurrentRuns: limit.trim() === "" ? null : Number(limit) });
    setBusy(false);
    if (r.error || !r.data) return setError(errorText(r.error) ?? "The user was not created");
    setUsername("");
    setPassword("");
    setRole("USER");
    setLimit("");
    onCreated(r.data.createUser.username);
  }

  return (
    <form className="admin-form" onSubmit={submit} aria-labelledby="create-user-title">
      <h3 id="create-user-title">Create a user</h3>
      <div className="admin-fields">
        <label>
          User name
          <input name="new-username" required minLength={3} maxLength={64} autoComplete="off" value={username} onChange={(e) => setUsername(e.target.value)} />
        </label>
        <label>
          Password
          <input name="new-password" type="password" required minLength={8} maxLength={256} autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} aria-describedby="create-user-password-hint" />
        </label>
        <label>
          Role
          <select name="role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
            <option value="USER">User</option>
            <option value="ADMIN">Administrator</option>
          </select>
        </label>
        <label>
          Concurrent runs limit
          <input name="limit" type="number" inputMode="numeric" min={1} max={100000} step={1} placeholder="no limit" value={limit} onChange={(e) => setLimit(e.target.value)} />
        </label>
        <button type="submit" className="primary" disabled={busy}>{busy ? "Creating…" : "Create user"}</button>
      </div>
      <p id="create-user-password-hint" className="hint">8–256 characters, not the user name, not a very common password. Tell the user to change it on their Account page.</p>
      <ErrorLine error={error} />
    </form>
  );
}
