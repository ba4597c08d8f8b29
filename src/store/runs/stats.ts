/**
 * The `runs` collection's figures for clusterStats (core/cluster-stats.ts): counts and samples read
 * through indexes, each bounded, never a scan of the collection.
 *
 * - open runs by status: `status_lease` (everyone's) or `owner_status_scheduled` (one owner's), by
 *   their prefix;
 * - runs ended in a window by final status: `status_finished` (everyone's, one count per status, no
 *   document read) or `owner_finished` (one owner's: the window's documents, at most `limit`);
 * - the start lateness of runs ended in a window: the newest `limit` by `finishedAt`;
 * - the runs waiting in a pool, oldest first: `queued_pool` (QUEUED runs only).
 * The reads name their index (`hint`): a planner could otherwise take `status_epoch_lease` for a
 * status and walk every run of it (the emulator, which plans by equality only, does; it checks
 * that a hinted index exists). The ended-run reads say `finishedAt` is a date, as the partial
 * indexes' filter does, so the hint is valid.
 */
import type { Filter } from "mongodb";
import { RunStatus, type RunDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/** Whose runs: one owner's, or null for everyone's. */
export type StatsOwner = string | null;

const owned = (ownerId: StatsOwner) => (ownerId === null ? {} : { ownerId });

/** Runs now in `status` (an open one: PENDING, QUEUED, RUNNING, RETRY_SCHEDULED). */
export function countRunsInStatus(mongo: Mongo, ownerId: StatsOwner, status: RunStatus): Promise<number> {
  return mongo.c.runs.countDocuments({ ...owned(ownerId), status } as Filter<RunDoc>);
}

/** Everyone's runs that ended in `status` at or after `since` (an index count). */
export function countEndedSince(mongo: Mongo, status: RunStatus, since: Date): Promise<number> {
  return mongo.c.runs.countDocuments({ status, finishedAt: { $gte: since, $type: "date" } } as Filter<RunDoc>, { hint: "status_finished" });
}

/**
 * One owner's runs ended at or after `since`, by status, from at most `limit` of them (the newest):
 * `read` says how many were read, so a caller can tell the figures were cut short (`read === limit`).
 */
export async function countOwnerEndedSince(mongo: Mongo, ownerId: string, since: Date, limit: number): Promise<{ byStatus: Map<RunStatus, number>; read: number }> {
  const rows = await mongo.c.runs
    .aggregate<{ _id: RunStatus; n: number }>(
      [
        { $match: { ownerId, finishedAt: { $gte: since, $type: "date" } } },
        { $sort: { finishedAt: -1 } },
        { $limit: limit },
        { $group: { _id: "$status", n: { $sum: 1 } } },
      ],
      { hint: "owner_finished" },
    )
    .toArray();
  const byStatus = new Map(rows.map((r) => [r._id, r.n]));
  return { byStatus, read: rows.reduce((s, r) => s + r.n, 0) };
}

export type StartedRun = Pick<RunDoc, "scheduledFor" | "startedAt">;

/** The newest `limit` runs (of `ownerId`, or anyone's) that ended at or after `since` and had started. */
export async function findEndedStarts(mongo: Mongo, ownerId: StatsOwner, since: Date, limit: number): Promise<StartedRun[]> {
  const docs = await mongo.c.runs
    .find({ ...owned(ownerId), finishedAt: { $gte: since, $type: "date" } } as Filter<RunDoc>, {
      projection: { _id: 0, scheduledFor: 1, startedAt: 1 },
      sort: { finishedAt: -1 },
      limit,
      hint: ownerId === null ? "finished_ttl" : "owner_finished",
    })
    .toArray();
  return (docs as StartedRun[]).filter((d) => d.startedAt instanceof Date);
}

/** The pools that have QUEUED runs (a distinct over `queued_pool`), at most `limit`. */
export async function findWaitingPools(mongo: Mongo, limit: number): Promise<string[]> {
  const pools = (await mongo.c.runs.distinct("pool", { status: RunStatus.QUEUED })) as string[];
  return pools.sort().slice(0, limit);
}

export type WaitingRun = Pick<RunDoc, "_id" | "pool" | "queuedAt" | "notBefore" | "ownerId">;

const WAITING_PROJECTION = { _id: 1, pool: 1, queuedAt: 1, notBefore: 1, ownerId: 1 } as const;

/**
 * The QUEUED run of `pool` that has waited longest at `now` (queued earliest, not staged for later;
 * held by its owner's limit counts: it waits too). Reads at most `scan` runs of the pool, oldest
 * first: staged runs are a few seconds' worth ahead of their time.
 */
export async function findOldestWaiting(mongo: Mongo, pool: string, now: Date, scan: number): Promise<WaitingRun | null> {
  const docs = (await mongo.c.runs
    .find({ status: RunStatus.QUEUED, pool } as Filter<RunDoc>, { projection: WAITING_PROJECTION, sort: { queuedAt: 1 }, limit: scan, hint: "queued_pool" })
    .toArray()) as WaitingRun[];
  return docs.find((d) => !d.notBefore || d.notBefore <= now) ?? null;
}

/** One owner's QUEUED runs (bounded by KAIROS_MAX_WAITING_RUNS in practice), at most `limit`. */
export async function findOwnerWaiting(mongo: Mongo, ownerId: string, limit: number): Promise<WaitingRun[]> {
  return (await mongo.c.runs
    .find({ ownerId, status: RunStatus.QUEUED } as Filter<RunDoc>, { projection: WAITING_PROJECTION, limit })
    .toArray()) as WaitingRun[];
}

export type RetryDue = Pick<RunDoc, "_id" | "jobId" | "pool" | "retryAt">;

/**
 * Runs waiting to retry (RETRY_SCHEDULED, their `r:` timer armed) whose retry is due before
 * `until`, of `ownerId` or anyone's, at most `limit`: the forecast counts them at their retry time.
 * Read on the status prefix of `owner_status_scheduled` or `status_epoch_lease`.
 */
export async function findRetriesDue(mongo: Mongo, ownerId: StatsOwner, until: Date, limit: number): Promise<RetryDue[]> {
  return (await mongo.c.runs
    .find({ ...owned(ownerId), status: RunStatus.RETRY_SCHEDULED, retryAt: { $lt: until } } as Filter<RunDoc>, { projection: { _id: 1, jobId: 1, pool: 1, retryAt: 1 }, limit })
    .toArray()) as RetryDue[];
}
