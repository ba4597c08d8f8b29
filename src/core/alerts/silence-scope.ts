/**
 * Which schedules a SCHEDULE_SILENT rule watches (docs/alerts.md, "Silent schedules"), and the
 * schedule of a watch as read now. A rule names one job (`jobId`, an INTERVAL or CRON job) or one
 * scheduled DAG (`dagId`), or neither: then every recurring job and scheduled DAG of its owner, those
 * there when the rule is made and those made (or given a recurring schedule) after it. Pure but
 * for readWatchedSchedule.
 */
import { AlertEvent, JobStatus, ScheduleKind, type AlertRuleDoc, type Schedule } from "../../domain/index.js";
import { findDagHeader, findJob, type Mongo, type RecurringJob } from "../../store/index.js";
import { longestQuiet } from "./validate.js";

/** The schedule a watch is on, as read now (null: the job or DAG is gone). */
export interface WatchedSchedule {
  id: string;
  ownerId: string;
  name: string;
  dag: boolean;
  createdAt: Date;
  /**
   * Its last change (a job's `updatedAt`; a DAG's, its timer job's): no later than when it got the
   * schedule it has, so a watch the reconciler arms late counts from here, never from before.
   */
  changedAt: Date;
  schedule: Schedule | null;
  /** Its schedule has no more slots (a job COMPLETED): no success is to be expected. */
  ended: boolean;
  paused: boolean;
}

/** What a rule on SCHEDULE_SILENT watches: one schedule, or all of its owner's (null: not such a rule). */
export type SilenceScope = { all: false; id: string; dag: boolean } | { all: true };

type RuleScope = Pick<AlertRuleDoc, "on" | "jobId" | "dagId" | "silentForMs" | "cluster">;

export function silenceScope(rule: RuleScope): SilenceScope | null {
  if (!rule.on.includes(AlertEvent.SCHEDULE_SILENT) || rule.silentForMs == null) return null;
  if (rule.jobId !== null) return { all: false, id: rule.jobId, dag: false };
  if (rule.dagId !== null) return { all: false, id: rule.dagId, dag: true };
  // A cluster-wide rule on SCHEDULE_SILENT is refused (validate.ts): it would watch every user's schedules.
  return rule.cluster ? null : { all: true };
}

/** The one schedule a SCHEDULE_SILENT rule names: its job, or its DAG (null: none, or the rule is not one). */
export const silenceTarget = (rule: RuleScope): { id: string; dag: boolean } | null => {
  const scope = silenceScope(rule);
  return scope && !scope.all ? { id: scope.id, dag: scope.dag } : null;
};

/** Whether the rule watches all of its owner's schedules. */
export const watchesAll = (rule: RuleScope): boolean => silenceScope(rule)?.all === true;

export const isRecurring = (s: Schedule | null): boolean => s !== null && (s.kind === ScheduleKind.INTERVAL || s.kind === ScheduleKind.CRON);

/**
 * Whether a rule on all of its owner's schedules covers this one: the owner's, recurring (INTERVAL or
 * CRON), not ended, and not one that goes longer than `silentFor` without a fire with nothing wrong
 * (an INTERVAL's period, a CRON's longest gap over the year ahead: it would be reported silent in
 * every such gap; a rule naming such a job is refused, saying so).
 */
export function coversSchedule(rule: Pick<AlertRuleDoc, "ownerId" | "silentForMs">, s: Pick<WatchedSchedule, "ownerId" | "schedule" | "ended">, now: number): boolean {
  if (s.ownerId !== rule.ownerId || s.ended || !isRecurring(s.schedule) || rule.silentForMs == null) return false;
  const quiet = longestQuiet(s.schedule!, now);
  return quiet === null || quiet.ms <= rule.silentForMs;
}

/** A recurring job as a watched schedule, as listed (ended: COMPLETED). */
export const jobCoverage = (j: RecurringJob): Pick<WatchedSchedule, "ownerId" | "schedule" | "ended"> => ({ ownerId: j.ownerId, schedule: j.schedule, ended: j.status === JobStatus.COMPLETED });

/** Reads the watched job or DAG (a scheduled DAG fires through its timer job, whose `_id` is the DAG's). */
export async function readWatchedSchedule(mongo: Mongo, target: { id: string; dag: boolean }): Promise<WatchedSchedule | null> {
  if (target.dag) {
    const d = await findDagHeader(mongo, target.id);
    if (!d) return null;
    const timer = d.schedule ? await findJob(mongo, target.id) : null;
    return {
      id: d._id, ownerId: d.ownerId, name: d.name, dag: true, createdAt: d.createdAt, changedAt: timer?.updatedAt ?? d.createdAt, schedule: d.schedule,
      ended: timer?.status === JobStatus.COMPLETED, paused: d.paused,
    };
  }
  const j = await findJob(mongo, target.id);
  if (!j) return null;
  return { id: j._id, ownerId: j.ownerId, name: j.name, dag: false, createdAt: j.createdAt, changedAt: j.updatedAt, schedule: j.schedule, ended: j.status === JobStatus.COMPLETED, paused: j.paused };
}

/** A listed recurring job as the schedule watched: itself, or (a DAG's timer job) its DAG, read. */
export async function watchedOfJob(mongo: Mongo, j: RecurringJob): Promise<WatchedSchedule | null> {
  if (j.dagId) return readWatchedSchedule(mongo, { id: j.dagId, dag: true });
  return { id: j._id, ownerId: j.ownerId, name: j.name, dag: false, createdAt: j.createdAt, changedAt: j.updatedAt, schedule: j.schedule, ended: j.status === JobStatus.COMPLETED, paused: j.paused };
}
