/** Log in with a username and password, or with an API key. */
import { useState, type FormEvent } from "react";
import { useMutation, useClient } from "urql";
import { LoginDocument, MeDocument } from "../../../generated/client/graphql";
import { errorText } from "../api/client";
import { useSession } from "./session";

export function LoginView() {
  const { logIn, endedBecause } = useSession();
  const [mode, setMode] = useState<"password" | "apiKey">("password");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [apiKey, setApiKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [, login] = useMutation(LoginDocument);
  const client = useClient();

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      if (mode === "password") {
        const r = await login({ username, password });
        if (r.error || !r.data) return setError(errorText(r.error) ?? "Login failed");
        const { token, expiresAt, user } = r.data.login;
        logIn({ credential: token, via: "password", user, expiresAt });
      } else {
        const key = apiKey.trim();
        const r = await client
          .query(MeDocument, {}, { requestPolicy: "network-only", fetchOptions: { headers: { authorization: `Bearer ${key}` } } })
          .toPromise();
        if (r.error || !r.data) return setError(errorText(r.error) ?? "That API key was not accepted");
        logIn({ credential: key, via: "apiKey", user: r.data.me, expiresAt: null });
      }
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="login">
      <form className="card login-card" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Kairos</h1>
        {endedBecause && <p role="status" className="notice">{endedBecause}</p>}
        <div className="tabs" role="tablist" aria-label="Log in with">
          <button type="button" role="tab" aria-selected={mode === "password"} onClick={() => setMode("password")}>Password</button>
          <button type="button" role="tab" aria-selected={mode === "apiKey"} onClick={() => setMode("apiKey")}>API key</button>
        </div>
        {mode === "password" ? (
          <>
            <label>
              Username
              <input name="username" autoComplete="username" required value={username} onChange={(e) => setUsername(e.target.value)} autoFocus />
            </label>
            <label>
              Password
              <input name="password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
            </label>
          </>
        ) : (
          <label>
            API key
            <input name="apiKey" type="password" autoComplete="off" required value={apiKey} onChange={(e) => setApiKey(e.target.value)} placeholder="kairos_…" />
          </label>
        )}
        {error && <p role="alert" className="error">{error}</p>}
        <button className="primary" type="submit" disabled={busy}>{busy ? "Logging in…" : "Log in"}</button>
        <p className="hint">
          First time? <code>kairos dev</code> prints the admin user and password it made. The API is at <code>/graphql</code>.
        </p>
      </form>
    </main>
  );
}
