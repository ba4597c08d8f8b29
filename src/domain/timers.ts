/**
 * Timer ids on the time wheel, made and read only here. `j:<jobId>` is a schedule's next fire,
 * `r:<runId>` a retry or a delayed one-off run, `d:<ruleId>:<fireKey>` the deadline an alert rule
 * set on a fired slot (core/alerts/deadlines.ts). The shard of a timer is derived from the job id,
 * so all timers of one job live in one shard.
 */
export type TimerId = string;

export type TimerRef = { kind: "job"; jobId: string } | { kind: "run"; runId: string } | { kind: "deadline"; ruleId: string; fireKey: string };

export const jobTimerId = (jobId: string): TimerId => `j:${jobId}`;
export const retryTimerId = (runId: string): TimerId => `r:${runId}`;
/** A slot's deadline under one alert rule (the rule id has no ':'; the fire key follows the second one). */
export const deadlineTimerId = (ruleId: string, fireKey: string): TimerId => `d:${ruleId}:${fireKey}`;

/** What a timer id names; null for an id of no known kind (written by something else). */
export function parseTimerId(id: TimerId): TimerRef | null {
  if (id.startsWith("j:")) return { kind: "job", jobId: id.slice(2) };
  if (id.startsWith("r:")) return { kind: "run", runId: id.slice(2) };
  if (id.startsWith("d:")) {
    const at = id.indexOf(":", 2);
    if (at > 2) return { kind: "deadline", ruleId: id.slice(2, at), fireKey: id.slice(at + 1) };
  }
  return null;
}
