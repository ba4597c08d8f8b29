/**
 * What the alert engine reads to find what happened (docs/alerts.md): runs that ended badly and
 * ledger entries of slots without a run, by when they were recorded, from a cursor kept in
 * `alertCursors`; DEAD nodes; runs waiting past a threshold; a scope's finished runs in a window;
 * and the jobs a RECOVERED rule saw failing (`alertStates`).
 */
import { RunStatus, type FireDoc, type FireOutcome, type NodeDoc, type RunDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";
import { alertCollections } from "./collections.js";

/** The fields of a run an alert reports. */
export type AlertRun = Pick<RunDoc, "_id" | "ownerId" | "jobId" | "jobName" | "fireKey" | "status" | "attempt" | "scheduledFor" | "finishedAt" | "error" | "exitCode" | "nodeId" | "dagRunId" | "queuedAt">;
const RUN_FIELDS = { _id: 1, ownerId: 1, jobId: 1, jobName: 1, fireKey: 1, status: 1, attempt: 1, scheduledFor: 1, finishedAt: 1, error: 1, exitCode: 1, nodeId: 1, dagRunId: 1, queuedAt: 1 } as const;

/** A scope: one owner's runs, one job's (or DAG's), or everyone's. */
export interface AlertScope {
  ownerId: string | null;
  jobId: string | null;
}
const scopeFilter = (s: AlertScope) => ({ ...(s.ownerId ? { ownerId: s.ownerId } : {}), ...(s.jobId ? { jobId: s.jobId } : {}) });

/** How far the scan `name` has read (null: never ran). */
export async function readAlertCursor(mongo: Mongo, name: string): Promise<Date | null> {
  return (await alertCollections(mongo).cursors.findOne({ _id: name }))?.at ?? null;
}

/** Moves the scan's cursor forward (never back: a slower scanner's write is ignored). */
export async function writeAlertCursor(mongo: Mongo, name: string, at: Date): Promise<void> {
  await alertCollections(mongo).cursors.updateOne({ _id: name }, { $max: { at } }, { upsert: true });
}

/** Runs of `statuses` that ended in (from, to], oldest end first. */
export function runsEndedBetween(mongo: Mongo, statuses: readonly RunStatus[], from: Date, to: Date, limit: number): Promise<AlertRun[]> {
  return mongo.c.runs
    .find({ status: { $in: [...statuses] }, finishedAt: { $gt: from, $lte: to } }, { projection: RUN_FIELDS })
    .sort({ finishedAt: 1, _id: 1 })
    .limit(limit)
    .toArray() as Promise<AlertRun[]>;
}

/** Ledger entries of `outcomes` recorded in (from, to], oldest first. */
export function firesRecordedBetween(mongo: Mongo, outcomes: readonly FireOutcome[], from: Date, to: Date, limit: number): Promise<FireDoc[]> {
  return mongo.c.fires
    .find({ outcome: { $in: [...outcomes] }, recordedAt: { $gt: from, $lte: to } })
    .sort({ recordedAt: 1, _id: 1 })
    .limit(limit)
    .toArray();
}

/** Nodes marked DEAD whose last heartbeat is after `since`. */
export function deadNodesSince(mongo: Mongo, since: Date, limit: number): Promise<Array<Pick<NodeDoc, "_id" | "name" | "lastHeartbeatAt">>> {
  return mongo.c.nodes.find({ status: "DEAD", lastHeartbeatAt: { $gt: since } }, { projection: { _id: 1, name: 1, lastHeartbeatAt: 1 } }).limit(limit).toArray();
}

/** Runs of the scope still QUEUED (not parked, not staged ahead) that were due before `dueBefore`. */
export function lateQueuedRuns(mongo: Mongo, scope: AlertScope, dueBefore: Date, limit: number): Promise<AlertRun[]> {
  return mongo.c.runs
    .find({ ...scopeFilter(scope), status: RunStatus.QUEUED, scheduledFor: { $lt: dueBefore }, $or: [{ notBefore: null }, { notBefore: { $lt: dueBefore } }] }, { projection: RUN_FIELDS })
    .limit(limit)
    .toArray() as Promise<AlertRun[]>;
}

const FINAL = [RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.DEAD, RunStatus.TIMED_OUT] as const;
const FAILED = new Set<string>([RunStatus.FAILED, RunStatus.DEAD, RunStatus.TIMED_OUT]);

/** The scope's runs that ended (succeeded or failed; cancelled ones are not counted) in (from, to], and how many of them failed. */
export async function finishedCounts(mongo: Mongo, scope: AlertScope, from: Date, to: Date): Promise<{ total: number; failed: number }> {
  const rows = await mongo.c.runs
    .aggregate<{ _id: string; n: number }>([
      { $match: { status: { $in: [...FINAL] }, finishedAt: { $gt: from, $lte: to }, ...scopeFilter(scope) } },
      { $group: { _id: "$status", n: { $sum: 1 } } },
    ])
    .toArray();
  let total = 0;
  let failed = 0;
  for (const r of rows) {
    total += r.n;
    if (FAILED.has(r._id)) failed += r.n;
  }
  return { total, failed };
}

/** The first run of `jobId` that succeeded after `after`, if any. */
export function successAfter(mongo: Mongo, jobId: string, after: Date): Promise<AlertRun | null> {
  return mongo.c.runs.findOne({ jobId, status: RunStatus.SUCCEEDED, finishedAt: { $gt: after } }, { projection: RUN_FIELDS, sort: { finishedAt: 1 } }) as Promise<AlertRun | null>;
}

/** Notes that a RECOVERED rule saw `jobId` fail at `at` (the latest failure is kept). */
export async function markFailing(mongo: Mongo, ruleId: string, jobId: string, at: Date): Promise<void> {
  await alertCollections(mongo).states.updateOne({ _id: `${ruleId}|${jobId}` }, { $max: { failedAt: at }, $setOnInsert: { ruleId, jobId } }, { upsert: true });
}

export function failingJobs(mongo: Mongo, ruleIds: readonly string[], limit: number) {
  return alertCollections(mongo).states.find({ ruleId: { $in: [...ruleIds] } }).limit(limit).toArray();
}

/** Forgets a failing job, unless it failed again since `failedAt`. */
export async function clearFailing(mongo: Mongo, id: string, failedAt: Date): Promise<void> {
  await alertCollections(mongo).states.deleteOne({ _id: id, failedAt });
}
