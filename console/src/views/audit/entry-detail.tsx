/**
 * One audit entry opened: who, from where, on what, how it ended, and what it changed — its
 * `before` and `after` as a diff (changes.ts), with a secret shown as "redacted" and a payload as its
 * digest, never as text — then the call's arguments. Buttons narrow the list to this actor or subject.
 */
import { changesOf, digestOf, REDACTED, valueText, MAX_CHANGES, type Change } from "./changes";
import type { AuditRow } from "./use-audit-log";

export function EntryDetail({ e, onFilter }: { e: AuditRow; onFilter(f: { userId?: string; apiKeyId?: string; subject?: string }): void }) {
  const changes = changesOf(e.before, e.after);
  return (
    <div className="audit-detail-body">
      <dl className="facts">
        <dt>Entry</dt>
        <dd>#{e.seq} <span className="muted mono" title="its hash in the chain">{e.hash.slice(0, 16)}…</span></dd>
        <dt>When</dt>
        <dd><time dateTime={e.at}>{e.at}</time></dd>
        <dt>Actor</dt>
        <dd>
          {e.actor}
          {e.actorRole && <span className="muted"> · role {e.actorRole.toLowerCase()}</span>}{" "}
          {e.actorApiKeyId ? (
            <button type="button" className="link-button" onClick={() => onFilter({ apiKeyId: e.actorApiKeyId! })}>Only this API key's calls</button>
          ) : e.actorUserId ? (
            <button type="button" className="link-button" onClick={() => onFilter({ userId: e.actorUserId! })}>Only this user's calls</button>
          ) : null}
        </dd>
        <dt>From</dt>
        <dd className="mono">{e.address}</dd>
        <dt>Outcome</dt>
        <dd>
          <OutcomeBadge outcome={e.outcome} />
          {e.error && <span> {e.error}</span>}
        </dd>
        <dt>Subjects</dt>
        <dd>
          {e.targetIds.length === 0 ? (
            <span className="muted">none</span>
          ) : (
            <ul className="audit-subjects">
              {e.targetIds.map((id) => (
                <li key={id}>
                  <code>{id}</code>{" "}
                  <button type="button" className="link-button" onClick={() => onFilter({ subject: id })} aria-label={`only calls on this: ${id}`}>only calls on this</button>
                </li>
              ))}
            </ul>
          )}
        </dd>
      </dl>
      <h3 className="audit-h3">What changed</h3>
      {changes.length === 0 ? (
        <p className="muted">{e.outcome === "OK" ? "Nothing recorded: this call changed no document the trail reads." : "Nothing: the call was refused, so nothing changed."}</p>
      ) : (
        <ChangesTable changes={changes} seq={e.seq} />
      )}
      <details className="audit-args">
        <summary>Arguments</summary>
        <pre className="audit-json">{JSON.stringify(e.args, null, 2)}</pre>
      </details>
    </div>
  );
}

export function OutcomeBadge({ outcome }: { outcome: string }) {
  // UNKNOWN: the call's API instance stopped before its end was recorded (docs/audit.md).
  const tone = outcome === "OK" ? "ok" : outcome === "UNKNOWN" ? "warn" : "bad";
  return <span className={`badge tone-${tone}`}>{outcome === "OK" ? "ok" : outcome.replace(/_/g, " ").toLowerCase()}</span>;
}

const KIND_WORD = { added: "added", removed: "removed", changed: "changed" } as const;

function ChangesTable({ changes, seq }: { changes: Change[]; seq: number }) {
  return (
    <div className="table-wrap">
      <table className="audit-diff" aria-label={`What entry ${seq} changed`}>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Change</th>
            <th scope="col">Before</th>
            <th scope="col">After</th>
          </tr>
        </thead>
        <tbody>
          {changes.map((c) => (
            <tr key={c.path} data-change={c.kind} data-field={c.path}>
              <th scope="row" className="mono">{c.path || <span className="muted">(the whole value)</span>}</th>
              <td>{KIND_WORD[c.kind]}</td>
              <td className="audit-before">{c.kind === "added" ? <span className="muted">—</span> : <><span className="audit-sign" aria-hidden="true">− </span><Value v={c.before} /></>}</td>
              <td className="audit-after">{c.kind === "removed" ? <span className="muted">—</span> : <><span className="audit-sign" aria-hidden="true">+ </span><Value v={c.after} /></>}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {changes.length >= MAX_CHANGES && <p className="muted">The first {MAX_CHANGES} fields are shown; the arguments and the API have the rest.</p>}
    </div>
  );
}

/** A value as the trail keeps it: a secret as "redacted", a payload as its digest, the rest as text. */
function Value({ v }: { v: unknown }) {
  if (v === REDACTED) return <span className="badge tone-muted audit-redacted" title="a secret: the trail never stores it">redacted</span>;
  const d = digestOf(v);
  if (d) {
    return (
      <span className="audit-digest" title={`sha256 ${d.sha256}`}>
        <span className="badge tone-muted">{d.truncated ? "too large to keep" : "digest"}</span> {d.chars.toLocaleString()} characters, sha256 <code>{d.sha256.slice(0, 12)}…</code>
      </span>
    );
  }
  return <code className="audit-value">{valueText(v)}</code>;
}
