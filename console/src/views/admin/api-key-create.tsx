/**
 * Creates an API key and shows it this once, in a field to copy from, with a warning. The key lives
 * only in this component's state: it is never stored, and it is gone when the user dismisses it or
 * leaves the page.
 */
import { useRef, useState, type FormEvent } from "react";
import type { ApiKeyScope } from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";
import { ErrorLine } from "../../ui/page";
import { useApiKeyMutations } from "./use-api-keys";

const EXPIRY: Array<{ value: string; label: string; days: number | null }> = [
  { value: "30", label: "in 30 days", days: 30 },
  { value: "90", label: "in 90 days", days: 90 },
  { value: "365", label: "in a year", days: 365 },
  { value: "never", label: "never", days: null },
];

export function ApiKeyCreate({ userId, ownerName, onCreated }: { userId: string | null; ownerName: string; onCreated(): void }) {
  const m = useApiKeyMutations();
  const [name, setName] = useState("");
  const [scope, setScope] = useState<ApiKeyScope>("READ_ONLY");
  const [expiry, setExpiry] = useState("90");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<{ key: string; name: string } | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    setBusy(true);
    const days = EXPIRY.find((x) => x.value === expiry)?.days ?? null;
    const expiresAt = days === null ? null : new Date(Date.now() + days * 86_400_000).toISOString();
    const r = await m.create({ name: name.trim(), scope, expiresAt, userId });
    setBusy(false);
    if (r.error || !r.data) return setError(errorText(r.error) ?? "The key was not created");
    setCreated({ key: r.data.createApiKey.key, name: r.data.createApiKey.apiKey.name });
    setName("");
    onCreated();
  }

  return (
    <>
      {created && <NewKey created={created} onDone={() => setCreated(null)} />}
      <form className="admin-form" onSubmit={submit} aria-label={`Create an API key for ${ownerName}`}>
        <h3>Create an API key for {ownerName}</h3>
        <div className="admin-fields">
          <label>
            Key name
            <input name="key-name" required maxLength={64} autoComplete="off" placeholder="e.g. nightly-etl" value={name} onChange={(e) => setName(e.target.value)} />
          </label>
          <label>
            Scope
            <select name="scope" value={scope} onChange={(e) => setScope(e.target.value as ApiKeyScope)}>
              <option value="READ_ONLY">Read only (queries and subscriptions)</option>
              <option value="READ_WRITE">Read and write (no credential changes)</option>
            </select>
          </label>
          <label>
            Expires
            <select name="expiry" value={expiry} onChange={(e) => setExpiry(e.target.value)}>
              {EXPIRY.map((x) => <option key={x.value} value={x.value}>{x.label}</option>)}
            </select>
          </label>
          <button type="submit" className="primary" disabled={busy}>{busy ? "Creating…" : "Create API key"}</button>
        </div>
        <ErrorLine error={error} />
      </form>
    </>
  );
}

function NewKey({ created, onDone }: { created: { key: string; name: string }; onDone(): void }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string | null>(null);
  async function copy() {
    try {
      await navigator.clipboard.writeText(created.key);
      setCopied("Copied to the clipboard.");
    } catch {
      field.current?.select();
      setCopied("Selected: press Ctrl+C (⌘C) to copy it.");
    }
  }
  return (
    <div className="admin-new-key" role="region" aria-labelledby="new-key-title">
      <h3 id="new-key-title">New API key “{created.name}”</h3>
      <p className="notice" id="new-key-warning">
        Copy this key now: it is shown this once and cannot be shown again (only its hash is stored). Treat it like a password.
      </p>
      <div className="admin-key-row">
        <input
          ref={field}
          className="mono"
          readOnly
          value={created.key}
          aria-label="The new API key"
          aria-describedby="new-key-warning"
          onFocus={(e) => e.currentTarget.select()}
          autoFocus
          spellCheck={false}
          autoComplete="off"
        />
        <button type="button" className="primary" onClick={() => void copy()}>Copy</button>
        <button type="button" onClick={onDone}>I have copied it</button>
      </div>
      {copied && <p role="status" className="hint">{copied}</p>}
    </div>
  );
}
