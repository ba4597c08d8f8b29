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
  const list = useUsers();
  const users = list.users;
  // Whose keys are shown: kept with the name, since that user need not be on the users page shown.
  const [keysOf, setKeysOfState] = useState<{ id: string; username: string; disabled: boolean }>({ id: me.id, username: me.username, disabled: false });
  const setKeysOf = (id: string) => {
    const u = users?.find((x) => x.id === id);
    setKeysOfState(id === me.id ? { id: me.id, username: me.username, disabled: false } : u ? { id: u.id, username: u.username, disabled: u.disabled } : keysOf);
  };
  const keysHeading = useRef<HTMLHeadingElement>(null);
  const selectId = useId();
  const ownerName = keysOf.id === me.id ? `${me.username} (you)` : keysOf.username;
  // The choice: you, the users of the page shown, and whoever is chosen (from an earlier page).
  const others = (users ?? []).filter((u) => u.id !== me.id);
  const choices = others.some((u) => u.id === keysOf.id) || keysOf.id === me.id ? others : [keysOf, ...others];

  return (
    <Page title="Admin">
      <nav aria-label="Admin sections" className="admin-jump">
        <a href="#users-title">Users</a> · <a href="#keys-title">API keys</a> · <a href="#unlock-title">Login lockouts</a>
      </nav>
      <UsersPanel
        list={list}
        onShowKeys={(u) => {
          setKeysOfState({ id: u.id, username: u.username, disabled: u.disabled });
          requestAnimationFrame(() => keysHeading.current?.focus());
        }}
      />

      <section className="card admin-section" aria-labelledby="keys-title">
        <h2 id="keys-title" ref={keysHeading} tabIndex={-1}>API keys</h2>
        <label className="admin-whose" htmlFor={selectId}>
          Whose keys
          <select id={selectId} value={keysOf.id} onChange={(e) => setKeysOf(e.target.value)}>
            <option value={me.id}>{me.username} (you)</option>
            {choices.map((u) => (
              <option key={u.id} value={u.id}>{u.username}{u.disabled ? " (disabled)" : ""}</option>
            ))}
          </select>
        </label>
        <ApiKeysPanel key={keysOf.id} userId={keysOf.id === me.id ? null : keysOf.id} ownerName={ownerName} headingId="keys-title" />
      </section>

      <section className="card admin-section" aria-labelledby="unlock-title">
        <h2 id="unlock-title" tabIndex={-1}>Login lockouts</h2>
        <UnlockForm />
      </section>
    </Page>
  );
}
