/**
 * The write of one run transition: the filter it applies under, the update it sends, and the
 * document that update produces from a known copy of the run. Core decides which transition;
 * the shapes (and so the indexes they use) are fixed here.
 */
import type { Filter, UpdateFilter } from "mongodb";
import { RunStatus } from "../../domain/index.js";
import type { RunDoc, RunTransition } from "../../domain/index.js";
import { UpdateBatcher } from "../batch.js";
import type { Mongo } from "../mongo.js";

/** Transitions kept per run document; older ones are dropped (the fire ledger and logs keep the rest). */
export const HISTORY_LIMIT = 50;

/** Counters a transition may bump. */
export type RunIncrements = Partial<Record<"attempt" | "fencingToken", number>>;

/** A transition's filter: always by `_id`, so it can join a batch. */
export type TransitionFilter = Filter<RunDoc> & { _id: string };

/**
 * A transition of a run the store still holds in a status the table allows it to leave
 * (`allowed`), optionally only while it still holds `token`, and meeting `also`.
 */
export function transitionFilter(runId: string, allowed: readonly RunStatus[], fence: { token?: number; also?: Filter<RunDoc> }): TransitionFilter {
  const filter: TransitionFilter = { ...fence.also, _id: runId, status: { $in: [...allowed] } };
  if (fence.token !== undefined) filter.fencingToken = fence.token;
  return filter;
}

/**
 * A transition out of a claim that was never written: the run must still be QUEUED exactly as
 * `queued` was enqueued (same token, same attempt, not parked).
 */
export function claimedTransitionFilter(runId: string, queued: RunDoc): TransitionFilter {
  return { _id: runId, status: RunStatus.QUEUED, fencingToken: queued.fencingToken, attempt: queued.attempt, heldByLimit: { $ne: true } };
}

/** The update of a transition: the fields, the new status, the history entries (capped), the counters. */
export function transitionUpdate(u: {
  to: RunStatus;
  now: Date;
  set?: Partial<RunDoc>;
  entries: RunTransition[];
  inc?: RunIncrements;
}): UpdateFilter<RunDoc> {
  const update = {
    $set: { ...u.set, status: u.to, updatedAt: u.now },
    $push: { history: { $each: u.entries, $slice: -HISTORY_LIMIT } },
  } as unknown as UpdateFilter<RunDoc>;
  if (u.inc) update.$inc = u.inc;
  return update;
}

/**
 * The document a transition's update produces, computed from a known copy of the run (the same
 * `$set`, `$push` with `$slice` and `$inc` the update sends). The fields no one else writes while
 * an attempt runs under its fencing token are exact; `leaseUntil` and `cancelRequested` are
 * whatever the copy holds unless the update sets them.
 */
export function applyTransition(
  run: RunDoc,
  u: { set?: Partial<RunDoc>; status: RunStatus; updatedAt: Date; entry: RunTransition; inc?: RunIncrements },
): RunDoc {
  const next: RunDoc = { ...run, ...u.set, status: u.status, updatedAt: u.updatedAt, history: [...run.history, u.entry].slice(-HISTORY_LIMIT) };
  if (u.inc?.attempt) next.attempt = run.attempt + u.inc.attempt;
  if (u.inc?.fencingToken) next.fencingToken = run.fencingToken + u.inc.fencingToken;
  return next;
}

/** Applies a transition and reads the run back; null when the filter no longer matched. */
export function transitionRun(mongo: Mongo, filter: TransitionFilter, update: UpdateFilter<RunDoc>): Promise<RunDoc | null> {
  return mongo.c.runs.findOneAndUpdate(filter, update, { returnDocument: "after" });
}

/** Batched transitions (executors finishing attempts) as bulkWrites; `batchOp` tells which applied. */
export function createTransitionBatcher(mongo: Mongo): UpdateBatcher<RunDoc> {
  return new UpdateBatcher(mongo.c.runs, "batchOp");
}
