/** Your account, for every user: change your password, manage your own API keys. */
import { useUser } from "../../auth/session";
import { Page } from "../../ui/page";
import { ApiKeysPanel } from "./api-keys-panel";
import { PasswordForm } from "./password-form";
import "./admin.css";

export function AccountView() {
  const { user, via } = useUser();
  return (
    <Page title="Account">
      <p className="muted">
        Logged in as <strong>{user.username}</strong> ({user.role === "ADMIN" ? "administrator" : "user"}){via === "apiKey" ? " with an API key" : ""}.
      </p>
      <section className="card admin-section" aria-labelledby="password-title">
        <h2 id="password-title">Password</h2>
        <PasswordForm />
      </section>
      <section className="card admin-section" aria-labelledby="my-keys-title">
        <h2 id="my-keys-title" tabIndex={-1}>Your API keys</h2>
        <p className="hint">An API key acts as you, limited by its scope, for scripts and services: send it as <code>Authorization: Bearer &lt;key&gt;</code>.</p>
        <ApiKeysPanel userId={null} ownerName={user.username} headingId="my-keys-title" />
      </section>
    </Page>
  );
}
