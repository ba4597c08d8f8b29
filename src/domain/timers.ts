/**
 * Timer ids on the time wheel, made and read only here. `j:<jobId>` is a schedule's next fire,
 * `r:<runId>` a retry or a delayed one-off run. The shard of a timer is derived from the job id,
 * so all timers of one job live in one shard.
 */
export type TimerId = string;

export type TimerRef = { kind: "job"; jobId: string } | { kind: "run"; runId: string };

export const jobTimerId = (jobId: string): TimerId => `j:${jobId}`;
export const retryTimerId = (runId: string): TimerId => `r:${runId}`;

/** What a timer id names; null for an id of no known kind (written by something else). */
export function parseTimerId(id: TimerId): TimerRef | null {
  if (id.startsWith("j:")) return { kind: "job", jobId: id.slice(2) };
  if (id.startsWith("r:")) return { kind: "run", runId: id.slice(2) };
  return null;
}
