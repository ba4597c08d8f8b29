/**
 * Which rules an event concerns and the firing each makes (pure). A firing's id is
 * `<ruleId>|<subject>`, the subject naming what happened once: a run's attempt, a ledger slot, a
 * node's death, a window of a failure rate, a slot's deadline. Whoever sees it first inserts it;
 * everyone else's insert is a duplicate.
 */
import { AlertEvent, alertFiringId, FireOutcome, RunStatus, type AlertFiringDoc, type AlertRuleDoc, type FireDoc } from "../../domain/index.js";
import type { AlertRun } from "../../store/index.js";

/** Whether a rule watches the runs or slots of `ownerId`'s job `jobId` (a DAG's task runs carry the DAG's id as jobId). */
export function inScope(rule: AlertRuleDoc, ownerId: string, jobId: string): boolean {
  if (rule.cluster) return true;
  if (rule.ownerId !== ownerId) return false;
  if (rule.jobId !== null) return rule.jobId === jobId;
  if (rule.dagId !== null) return rule.dagId === jobId;
  return true;
}

/** Whether the rule may fire at `now` for something that happened at `at` (not muted, and not before the rule existed). */
export function live(rule: AlertRuleDoc, at: Date, now: number): boolean {
  return (rule.mutedUntil === null || rule.mutedUntil.getTime() <= now) && at.getTime() >= rule.createdAt.getTime();
}

/** The events a run's end stands for, most specific first. */
export function runEvents(run: Pick<AlertRun, "status" | "error">): AlertEvent[] {
  const oom = typeof run.error === "string" && run.error.startsWith("OOM_KILLED");
  switch (run.status) {
    case RunStatus.FAILED:
      return oom ? [AlertEvent.RUN_OOM_KILLED, AlertEvent.RUN_FAILED] : [AlertEvent.RUN_FAILED];
    case RunStatus.DEAD:
      return oom ? [AlertEvent.RUN_OOM_KILLED, AlertEvent.RUN_DEAD] : [AlertEvent.RUN_DEAD];
    case RunStatus.TIMED_OUT:
      return [AlertEvent.RUN_TIMED_OUT];
    default:
      return [];
  }
}

const firing = (rule: AlertRuleDoc, subject: string, event: AlertEvent, at: Date, now: number, f: Partial<AlertFiringDoc> & { detail: string }): AlertFiringDoc => ({
  _id: alertFiringId(rule._id, subject),
  ruleId: rule._id,
  ownerId: rule.ownerId,
  event,
  at,
  runId: null,
  jobId: null,
  jobName: null,
  fireKey: null,
  nodeId: null,
  deliveryId: null,
  createdAt: new Date(now),
  ...f,
});

const runFields = (run: AlertRun) => ({ runId: run._id, jobId: run.jobId, jobName: run.jobName, fireKey: run.fireKey, nodeId: run.nodeId });

/** The firing of `rule` for a run that ended badly, or null when the rule does not listen to it. */
export function runFiring(rule: AlertRuleDoc, run: AlertRun, now: number): AlertFiringDoc | null {
  const event = runEvents(run).find((e) => rule.on.includes(e));
  if (!event || !inScope(rule, run.ownerId, run.jobId) || !live(rule, run.finishedAt!, now)) return null;
  const why = run.error ? `: ${run.error.split("\n")[0]!.slice(0, 200)}` : run.exitCode !== null ? ` (exit code ${run.exitCode})` : "";
  const detail = `run ${run._id} of ${run.jobName} ended ${run.status} after attempt ${run.attempt}${why}`;
  return firing(rule, `run:${run._id}#${run.attempt}`, event, run.finishedAt!, now, { ...runFields(run), detail });
}

export function recoveredFiring(rule: AlertRuleDoc, run: AlertRun, now: number): AlertFiringDoc {
  return firing(rule, `recovered:${run._id}`, AlertEvent.RECOVERED, run.finishedAt!, now, { ...runFields(run), detail: `${run.jobName} recovered: run ${run._id} succeeded after a failure` });
}

const SKIPPED = new Set<string>([FireOutcome.SKIPPED_OVERLAP, FireOutcome.SKIPPED_PAUSED, FireOutcome.SKIPPED_DST, FireOutcome.SKIPPED_BACKLOG]);

export function fireFiring(rule: AlertRuleDoc, fire: FireDoc, now: number): AlertFiringDoc | null {
  const event = fire.outcome === FireOutcome.MISSED ? AlertEvent.FIRE_MISSED : SKIPPED.has(fire.outcome) ? AlertEvent.FIRE_SKIPPED : null;
  if (!event || !rule.on.includes(event) || !inScope(rule, fire.ownerId, fire.jobId) || !live(rule, fire.recordedAt, now)) return null;
  const detail = `the slot at ${fire.slotAt.toISOString()} of job ${fire.jobId} was ${fire.outcome}${fire.reason ? `: ${fire.reason.slice(0, 200)}` : ""}`;
  return firing(rule, `fire:${fire._id}`, event, fire.recordedAt, now, { jobId: fire.jobId, fireKey: fire._id, runId: fire.runId, detail });
}

export function nodeFiring(rule: AlertRuleDoc, node: { _id: string; name: string; lastHeartbeatAt: Date }, now: number): AlertFiringDoc {
  return firing(rule, `node:${node._id}@${node.lastHeartbeatAt.getTime()}`, AlertEvent.NODE_LOST, node.lastHeartbeatAt, now, { // not a fire key: an alert's subject (the node and the heartbeat it was lost after)
    nodeId: node._id,
    detail: `node ${node.name} was lost: no heartbeat since ${node.lastHeartbeatAt.toISOString()}; its runs are reclaimed as their leases end`,
  });
}

export function latenessFiring(rule: AlertRuleDoc, run: AlertRun, now: number): AlertFiringDoc {
  const late = Math.round((now - run.scheduledFor.getTime()) / 1000);
  return firing(rule, `late:${run._id}#${run.attempt}`, AlertEvent.QUEUE_LATENESS, new Date(now), now, { ...runFields(run), detail: `run ${run._id} of ${run.jobName} has waited ${late} s to start since it was due` });
}

export function rateFiring(rule: AlertRuleDoc, counts: { total: number; failed: number }, now: number): AlertFiringDoc {
  const w = rule.failureRate!;
  const pct = Math.round((counts.failed / counts.total) * 1000) / 10;
  return firing(rule, `rate:${Math.floor(now / w.windowMs)}`, AlertEvent.FAILURE_RATE, new Date(now), now, {
    detail: `${counts.failed} of ${counts.total} runs failed in the last ${Math.round(w.windowMs / 1000)} s (${pct} %, threshold ${w.threshold * 100} %)`,
  });
}

export function deadlineFiring(rule: AlertRuleDoc, d: { fireKey: string; jobId: string; jobName: string; runId: string | null; slotAt: Date; status: string | null }, now: number): AlertFiringDoc {
  const run = d.runId ? `run ${d.runId} is ${d.status ?? "missing"}` : "no run was made";
  return firing(rule, `deadline:${d.fireKey}`, AlertEvent.DEADLINE_MISSED, new Date(d.slotAt.getTime() + (rule.deadlineMs ?? 0)), now, {
    runId: d.runId,
    jobId: d.jobId,
    jobName: d.jobName,
    fireKey: d.fireKey,
    detail: `the slot at ${d.slotAt.toISOString()} of ${d.jobName} missed its deadline of ${Math.round((rule.deadlineMs ?? 0) / 1000)} s: ${run}`,
  });
}

/** A schedule's silence: no success for `silentFor` since `since` (its last success, or when the watch began); one per silence. */
export function silenceFiring(rule: AlertRuleDoc, s: { jobId: string; name: string; dag: boolean; since: Date; paused: boolean }, now: number): AlertFiringDoc {
  const n = rule.silentForMs ?? 0;
  const what = s.dag ? `DAG ${s.name}` : s.name;
  return firing(rule, `silent:${s.jobId}@${s.since.getTime()}`, AlertEvent.SCHEDULE_SILENT, new Date(s.since.getTime() + n), now, { // not a fire key: an alert's subject (the schedule and the success its silence began after)
    jobId: s.jobId,
    jobName: s.name,
    detail: `${what} has had no successful run for ${Math.round(n / 1000)} s (since ${s.since.toISOString()})${s.paused ? "; it is paused" : ""}`,
  });
}

/** `ms` for a person: its two largest units from the first that is not zero (`6 h 40 min`, `45 s`, `2 d`). */
export function spokenDuration(ms: number): string {
  const units: Array<[string, number]> = [["d", 86_400_000], ["h", 3_600_000], ["min", 60_000], ["s", 1_000]];
  const parts: Array<[number, string]> = [];
  let rest = Math.max(0, Math.round(ms / 1000) * 1000);
  for (const [name, size] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (parts.length > 0 || n > 0) parts.push([n, name]);
    if (parts.length === 2) break;
  }
  return parts.filter(([n]) => n > 0).map(([n, name]) => `${n} ${name}`).join(" ") || "0 s";
}

/**
 * The end of a reported silence: the schedule's first success after it (`at`, when that run
 * ended). One per silence, as the silence's firing is: its subject is the silence's start.
 */
export function silenceResolvedFiring(rule: AlertRuleDoc, s: { jobId: string; name: string; dag: boolean; since: Date; at: Date }, now: number): AlertFiringDoc {
  const what = s.dag ? `DAG ${s.name}` : s.name;
  return firing(rule, `resolved:${s.jobId}@${s.since.getTime()}`, AlertEvent.SCHEDULE_SILENT_RESOLVED, s.at, now, { // not a fire key: an alert's subject (the silence it ends, by its start)
    jobId: s.jobId,
    jobName: s.name,
    detail: `${what} fired successfully again: ${s.dag ? "a DAG run" : "a run"} ended SUCCEEDED at ${s.at.toISOString()}, after ${spokenDuration(s.at.getTime() - s.since.getTime())} without a successful run (since ${s.since.toISOString()})`,
  });
}
