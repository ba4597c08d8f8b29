/** Edits how many of a user's runs may run at once (empty: no limit). */
import { useState, type FormEvent } from "react";
import type { AdminUser } from "./use-users";

export function ConcurrencyEditor({ user, onSave, onCancel }: { user: AdminUser; onSave(limit: number | null): Promise<void>; onCancel(): void }) {
  const [value, setValue] = useState(user.maxConcurrentRuns == null ? "" : String(user.maxConcurrentRuns));
  const [busy, setBusy] = useState(false);
  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    await onSave(value.trim() === "" ? null : Number(value));
    setBusy(false);
  }
  return (
    <form className="admin-inline-form" onSubmit={submit} onKeyDown={(e) => e.key === "Escape" && onCancel()}>
      <label className="inline">
        <span className="admin-sr-only">Concurrent runs of {user.username} (empty: no limit)</span>
        <input type="number" inputMode="numeric" min={1} max={100000} step={1} placeholder="no limit" value={value} onChange={(e) => setValue(e.target.value)} autoFocus size={6} />
      </label>
      <button type="submit" className="primary" disabled={busy}>Save</button>
      <button type="button" onClick={onCancel}>Cancel</button>
    </form>
  );
}
