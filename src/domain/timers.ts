/**
 * Timer ids on the time wheel, made and read only here. `j:<jobId>` is a schedule's next fire,
 * `r:<runId>` a retry or a delayed one-off run, `d:<ruleId>:<fireKey>` the deadline an alert rule
 * set on a fired slot (core/alerts/deadlines.ts), `s:<ruleId>:<jobId>` an alert rule's watch on a
 * schedule's silence (core/alerts/silences.ts; a DAG's id for a scheduled DAG). The shard of a timer is derived from the job id,
 * so all timers of one job live in one shard.
 */
export type TimerId = string;

export type TimerRef = { kind: "job"; jobId: string } | { kind: "run"; runId: string } | { kind: "deadline"; ruleId: string; fireKey: string } | { kind: "silence"; ruleId: string; jobId: string };

export const jobTimerId = (jobId: string): TimerId => `j:${jobId}`;
export const retryTimerId = (runId: string): TimerId => `r:${runId}`;
/** A slot's deadline under one alert rule (the rule id has no ':'; the fire key follows the second one). */
export const deadlineTimerId = (ruleId: string, fireKey: string): TimerId => `d:${ruleId}:${fireKey}`;

/** A schedule's silence under one alert rule (SCHEDULE_SILENT): the job's (or scheduled DAG's) id follows the second ':'. */
export const silenceTimerId = (ruleId: string, jobId: string): TimerId => `s:${ruleId}:${jobId}`;

/** What a timer id names; null for an id of no known kind (written by something else). */
export function parseTimerId(id: TimerId): TimerRef | null {
  if (id.startsWith("j:")) return { kind: "job", jobId: id.slice(2) };
  if (id.startsWith("r:")) return { kind: "run", runId: id.slice(2) };
  if (id.startsWith("d:")) {
    const at = id.indexOf(":", 2);
    if (at > 2) return { kind: "deadline", ruleId: id.slice(2, at), fireKey: id.slice(at + 1) };
  }
  if (id.startsWith("s:")) {
    const at = id.indexOf(":", 2);
    if (at > 2) return { kind: "silence", ruleId: id.slice(2, at), jobId: id.slice(at + 1) };
  }
  return null;
}
