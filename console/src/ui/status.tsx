/** A run's, job's or DAG task's status: a word and a colour (never colour alone). */
const TONE: Record<string, string> = {
  SUCCEEDED: "ok",
  SUCCESS: "ok",
  ACTIVE: "ok",
  HEALTHY: "ok",
  RUNNING: "run",
  CANCELLING: "run",
  QUEUED: "wait",
  PENDING: "wait",
  SCHEDULED: "wait",
  RETRY_SCHEDULED: "warn",
  UP_FOR_RETRY: "warn",
  PAUSED: "muted",
  SKIPPED: "muted",
  CANCELLED: "muted",
  WITHDRAWN: "muted",
  UPSTREAM_FAILED: "bad",
  FAILED: "bad",
  TIMED_OUT: "bad",
  DEAD: "bad",
  UNHEALTHY: "bad",
};

export function tone(status: string): string {
  return TONE[status] ?? "muted";
}

export function StatusBadge({ status, label }: { status: string; label?: string }) {
  return (
    <span className={`badge tone-${tone(status)}`} data-status={status}>
      {label ?? status.replace(/_/g, " ").toLowerCase()}
    </span>
  );
}
