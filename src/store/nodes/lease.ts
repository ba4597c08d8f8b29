/**
 * Node leases (the lease fields of the `nodes` documents, see NodeDoc.leaseEpoch): the executor's
 * renewal, merged with its heartbeat, one write of one document; its next epoch; a scheduler's
 * end of a lapsed epoch (a compare-and-set); and the reads the lease watch needs.
 */
import type { NodeDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";
import type { NodeBeat } from "./registry.js";

/** What the lease watch reads of a node lease. */
export type NodeLease = Pick<NodeDoc, "_id" | "leaseEpoch" | "leaseUntil" | "leaseMs" | "reclaimThrough" | "reclaimFrom" | "reclaimUntil">;
const LEASE_FIELDS = { _id: 1, leaseEpoch: 1, leaseUntil: 1, leaseMs: 1, reclaimThrough: 1, reclaimFrom: 1, reclaimUntil: 1 } as const;

function beatFields(beat: NodeBeat): Partial<NodeDoc> {
  return { lastHeartbeatAt: beat.at, running: beat.running, usage: beat.usage, ...(beat.status ? { status: beat.status } : {}) };
}

/**
 * The heartbeat of a node holding `epoch`: moves its lease to `leaseUntil` with the beat's fields,
 * only while that epoch is the node's and not ended. False: the epoch was ended (by a scheduler,
 * its lease having lapsed), and nothing was written.
 */
export async function renewNodeLease(mongo: Mongo, nodeId: string, epoch: number, leaseUntil: Date, beat: NodeBeat): Promise<boolean> {
  const res = await mongo.c.nodes.updateOne({ _id: nodeId, leaseEpoch: epoch, leaseEnded: false }, { $set: { leaseUntil, ...beatFields(beat) } });
  return res.matchedCount === 1;
}

/**
 * The node's next epoch after `ended` was ended, with a lease to `leaseUntil` and the beat's
 * fields: returns it, or null when the node's epoch is not `ended` (ended or renewed elsewhere:
 * only the executor itself moves its epoch, so this means it already moved on).
 */
export async function nextNodeEpoch(mongo: Mongo, nodeId: string, ended: number, leaseUntil: Date, beat: NodeBeat): Promise<number | null> {
  const doc = await mongo.c.nodes.findOneAndUpdate(
    { _id: nodeId, leaseEpoch: ended, leaseEnded: true },
    { $inc: { leaseEpoch: 1 }, $set: { leaseEnded: false, leaseUntil, ...beatFields(beat) } },
    { returnDocument: "after", projection: { leaseEpoch: 1 } },
  );
  return doc?.leaseEpoch ?? null;
}

/** The node's lease epoch as stored (null: no such node, or one of an older version). */
export async function readNodeEpoch(mongo: Mongo, nodeId: string): Promise<{ epoch: number; ended: boolean } | null> {
  const doc = await mongo.c.nodes.findOne({ _id: nodeId }, { projection: { leaseEpoch: 1, leaseEnded: 1 } });
  return doc?.leaseEpoch === undefined ? null : { epoch: doc.leaseEpoch, ended: doc.leaseEnded === true };
}

/**
 * The node leases not ended, earliest end first, up to `limit` (index `lease_end`): those before
 * the lease watch's `now` have lapsed, and the first after it is when to look next. One read for both.
 */
export function findNodeLeasesByEnd(mongo: Mongo, limit: number): Promise<NodeLease[]> {
  return mongo.c.nodes.find({ leaseEnded: false }, { projection: LEASE_FIELDS }).sort({ leaseUntil: 1 }).limit(limit).toArray() as Promise<NodeLease[]>;
}

/**
 * Ends the node's `epoch` if its lease is still over at `now` and still that epoch, not ended: a
 * renewal that landed since it was read moved `leaseUntil` past `now` and wins; a renewal landing
 * after this finds the epoch ended and moves nothing. Exactly one of the two. Marks the node's runs
 * of this epoch and older to be queued again until `reclaimUntil`; `endedAt` (the lapsed lease's
 * end as read) is kept as `reclaimFrom`. True: this call ended it.
 */
export async function endNodeEpoch(mongo: Mongo, nodeId: string, epoch: number, endedAt: Date, now: number, reclaimUntil: Date): Promise<boolean> {
  const res = await mongo.c.nodes.updateOne(
    { _id: nodeId, leaseEpoch: epoch, leaseEnded: false, leaseUntil: { $lt: new Date(now) } },
    { $set: { leaseEnded: true, reclaimThrough: epoch, reclaimFrom: endedAt, reclaimUntil } },
  );
  return res.modifiedCount === 1;
}

/** Nodes whose ended epochs' runs are still being queued again (index `reclaim_until`, partial). */
export function findNodeReclaims(mongo: Mongo, limit: number): Promise<NodeLease[]> {
  return mongo.c.nodes.find({ reclaimUntil: { $type: "date" } }, { projection: LEASE_FIELDS }).limit(limit).toArray() as Promise<NodeLease[]>;
}

/** Done with the node's ended epochs through `through` (unless a later end marked it again). */
export async function clearNodeReclaim(mongo: Mongo, nodeId: string, through: number): Promise<void> {
  await mongo.c.nodes.updateOne({ _id: nodeId, reclaimThrough: through }, { $set: { reclaimUntil: null } });
}
