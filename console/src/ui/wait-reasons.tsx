/**
 * The server's reasons a run has not started or a job makes no runs (Run.waiting, Job.problems;
 * docs/waiting.md): each as its code (a word, not a colour alone), what to do, and since / until.
 */
import { Time } from "./time";

export interface WaitReasonView {
  code: string;
  message: string;
  since?: string | null;
  until?: string | null;
}

/** How each code reads as a short label. */
const LABEL: Record<string, string> = {
  PAUSED: "Paused",
  OWNER_DELETED: "Owner deleted",
  NO_MORE_FIRES: "No fires left",
  USER_CONCURRENCY_LIMIT: "Concurrency limit",
  POOL_UNSERVED: "Pool not served",
  POOL_BUSY: "Waiting for an executor",
  WAITING_ON_PARENT: "Waiting on a parent",
  MAX_PARALLEL: "DAG at maxParallel",
  OVERLAP: "Overlap policy",
  MISFIRE: "Misfire",
  DST_SKIPPED: "DST gap",
  BACKLOG: "Too many waiting runs",
  RATE_LIMITED: "Rate limited",
  NOT_DUE: "Not due yet",
  RETRY_BACKOFF: "Retry backoff",
};

export function waitLabel(code: string): string {
  return LABEL[code] ?? code;
}

export function WaitReasons({ reasons, title, id }: { reasons: readonly WaitReasonView[]; title: string; id: string }) {
  if (reasons.length === 0) return null;
  return (
    <section className="notice wait-reasons" aria-labelledby={id} data-testid={id}>
      <h2 id={id}>{title}</h2>
      <WaitReasonList reasons={reasons} />
    </section>
  );
}

/** The reasons as a list: each its label, code, what to do, and since / until. */
export function WaitReasonList({ reasons }: { reasons: readonly WaitReasonView[] }) {
  return (
    <ul>
      {reasons.map((r) => (
        <li key={`${r.code}:${r.message}`} data-code={r.code}>
          <span className="badge tone-wait">{waitLabel(r.code)}</span> <span className="mono wait-code">{r.code}</span>
          <p>{r.message}</p>
          {(r.since || r.until) && (
            <p className="muted wait-when">
              {r.since && <>since <Time iso={r.since} mode="relative" /></>}
              {r.since && r.until && " · "}
              {r.until && <>until <Time iso={r.until} mode="relative" /> (<Time iso={r.until} />)</>}
            </p>
          )}
        </li>
      ))}
    </ul>
  );
}
