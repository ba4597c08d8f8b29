/** Administration (administrators only; app.tsx answers "Not found" to others): users, API keys, login lockouts. */
import { useId, useRef, useState } from "react";
import { useUser } from "../../auth/session";
import { Page } from "../../ui/page";
import { ApiKeysPanel } from "./api-keys-panel";
import { UnlockForm } from "./unlock-form";
import { UsersPanel } from "./users-panel";
import { useUsers } from "./use-users";
import "./admin.css";

export function AdminView(_props: { id?: string | null } = {}) {
  const me = useUser().user;
  const { users } = useUsers();
  const [keysOf, setKeysOf] = useState<string>(me.id);
  const keysHeading = useRef<HTMLHeadingElement>(null);
  const selectId = useId();
  const owner = users?.find((u) => u.id === keysOf);
  const ownerName = keysOf === me.id ? `${me.username} (you)` : owner?.username ?? "this user";

  return (
    <Page title="Admin">
      <nav aria-label="Admin sections" className="admin-jump">
        <a href="#users-title">Users</a> · <a href="#keys-title">API keys</a> · <a href="#unlock-title">Login lockouts</a>
      </nav>
      <UsersPanel
        onShowKeys={(u) => {
          setKeysOf(u.id);
          requestAnimationFrame(() => keysHeading.current?.focus());
        }}
      />

      <section className="card admin-section" aria-labelledby="keys-title">
        <h2 id="keys-title" ref={keysHeading} tabIndex={-1}>API keys</h2>
        <label className="admin-whose" htmlFor={selectId}>
          Whose keys
          <select id={selectId} value={keysOf} onChange={(e) => setKeysOf(e.target.value)}>
            <option value={me.id}>{me.username} (you)</option>
            {users?.filter((u) => u.id !== me.id).map((u) => (
              <option key={u.id} value={u.id}>{u.username}{u.disabled ? " (disabled)" : ""}</option>
            ))}
          </select>
        </label>
        <ApiKeysPanel key={keysOf} userId={keysOf === me.id ? null : keysOf} ownerName={ownerName} headingId="keys-title" />
      </section>

      <section className="card admin-section" aria-labelledby="unlock-title">
        <h2 id="unlock-title" tabIndex={-1}>Login lockouts</h2>
        <UnlockForm />
      </section>
    </Page>
  );
}
