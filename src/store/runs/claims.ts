/** Claims and leases of runs: QUEUED → RUNNING under a fencing token, and the lease kept after. */
import type { UpdateFilter } from "mongodb";
import { RunStatus } from "../../domain/index.js";
import type { RunDoc, RunTransition } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";
import { HISTORY_LIMIT } from "./transitions.js";

/** A QUEUED run's owner, token and parking flag: what a single claim checks first. */
export function findClaimable(mongo: Mongo, runId: string): Promise<Pick<RunDoc, "_id" | "ownerId" | "fencingToken" | "heldByLimit"> | null> {
  return mongo.c.runs.findOne({ _id: runId, status: RunStatus.QUEUED }, { projection: { ownerId: 1, fencingToken: 1, heldByLimit: 1 } });
}

/** Those of `runIds` still QUEUED, with their owner and parking flag. */
export function findClaimCandidates(mongo: Mongo, runIds: readonly string[]): Promise<Array<Pick<RunDoc, "_id" | "ownerId" | "heldByLimit">>> {
  return mongo.c.runs.find({ _id: { $in: [...runIds] }, status: RunStatus.QUEUED }, { projection: { ownerId: 1, heldByLimit: 1 } }).toArray();
}

/**
 * Claims every run of `runIds` still QUEUED and not parked in one updateMany, each checked
 * atomically per document; the winners carry `claimId` (see {@link findBatchClaimWinners}).
 */
export async function claimBatch(
  mongo: Mongo,
  runIds: string[],
  claim: { fields: Partial<RunDoc>; claimId: string; at: Date; entry: RunTransition },
): Promise<void> {
  await mongo.c.runs.updateMany(
    { _id: { $in: runIds }, status: RunStatus.QUEUED, heldByLimit: { $ne: true } },
    {
      $set: { ...claim.fields, status: RunStatus.RUNNING, claimId: claim.claimId, updatedAt: claim.at },
      $inc: { fencingToken: 1 },
      $push: { history: { $each: [claim.entry], $slice: -HISTORY_LIMIT } },
    } as unknown as UpdateFilter<RunDoc>,
  );
}

/** The runs of `runIds` a batch claim won: still RUNNING under its `claimId`. */
export function findBatchClaimWinners(mongo: Mongo, runIds: string[], claimId: string): Promise<RunDoc[]> {
  return mongo.c.runs.find({ _id: { $in: runIds }, claimId, status: RunStatus.RUNNING }).toArray();
}

/**
 * The run as a confirmed claim left it (RUNNING on `nodeId` under the token after `queued`'s,
 * same attempt): recognises a confirm that applied but whose reply was lost.
 */
export function findConfirmedClaim(mongo: Mongo, queued: RunDoc, nodeId: string): Promise<RunDoc | null> {
  return mongo.c.runs.findOne({
    _id: queued._id,
    status: RunStatus.RUNNING,
    fencingToken: queued.fencingToken + 1,
    attempt: queued.attempt,
    nodeId,
  });
}

/** Bumps the token of a run still QUEUED and not parked (and records `entry` in its history); the run after, or null. */
export function bumpQueuedToken(mongo: Mongo, runId: string, now: Date, entry?: RunTransition, expectedToken?: number, onceForReason = false): Promise<RunDoc | null> {
  const update = {
    $inc: { fencingToken: 1 },
    $set: { updatedAt: now },
    ...(entry ? { $push: { history: { $each: [entry], $slice: -HISTORY_LIMIT } } } : {}),
  } as unknown as UpdateFilter<RunDoc>;
  const filter = {
    _id: runId,
    status: RunStatus.QUEUED,
    heldByLimit: { $ne: true },
    ...(expectedToken === undefined ? {} : { fencingToken: expectedToken }),
    // Not if its history already says this (the same expired claim acted on before).
    ...(onceForReason && entry?.reason ? { "history.reason": { $ne: entry.reason } } : {}),
  };
  return mongo.c.runs.findOneAndUpdate(filter, update, { returnDocument: "after" });
}

/** A running attempt an executor holds: its run and its fencing token. */
export interface HeldAttempt {
  runId: string;
  token: number;
}

/** A node's RUNNING runs as it checks them (index `status_node_epoch`): token, claim lease, cancel asked. */
export function readNodeRuns(mongo: Mongo, nodeId: string): Promise<Array<Pick<RunDoc, "_id" | "fencingToken" | "leaseUntil" | "cancelRequested">>> {
  return mongo.c.runs
    .find({ status: RunStatus.RUNNING, nodeId }, { projection: { _id: 1, fencingToken: 1, leaseUntil: 1, cancelRequested: 1 } })
    .toArray() as Promise<Array<Pick<RunDoc, "_id" | "fencingToken" | "leaseUntil" | "cancelRequested">>>;
}

/** Those of `runIds` still RUNNING on `nodeId`, whole. */
export function findNodeRunning(mongo: Mongo, nodeId: string, runIds: readonly string[]): Promise<RunDoc[]> {
  return mongo.c.runs.find({ _id: { $in: [...runIds] }, status: RunStatus.RUNNING, nodeId }).toArray();
}
