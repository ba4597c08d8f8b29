/**
 * Per-user run slots: `runSlots` holds one `runId:fencingToken` per RUNNING attempt of a user
 * with `maxConcurrentRuns`, taken by compare-and-set on the set's size.
 */
import type { Filter } from "mongodb";
import type { UserDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/** The user's `maxConcurrentRuns` (null: no limit, or no such user). */
export async function findRunLimit(mongo: Mongo, userId: string): Promise<number | null> {
  const user = await mongo.c.users.findOne({ _id: userId }, { projection: { maxConcurrentRuns: 1 } });
  return user?.maxConcurrentRuns ?? null;
}

/** Adds `key` to the user's slots only while fewer than `maxConcurrentRuns` are taken; true when it matched. */
export async function addRunSlotIfFree(mongo: Mongo, userId: string, key: string): Promise<boolean> {
  const res = await mongo.c.users.updateOne(
    {
      _id: userId,
      maxConcurrentRuns: { $ne: null },
      $expr: { $lt: [{ $size: { $ifNull: ["$runSlots", []] } }, "$maxConcurrentRuns"] },
    } as Filter<UserDoc>,
    { $addToSet: { runSlots: key } },
  );
  return res.matchedCount === 1;
}

/** The user's limit and the slots taken under it. */
export function findRunSlots(mongo: Mongo, userId: string): Promise<Pick<UserDoc, "_id" | "maxConcurrentRuns" | "runSlots"> | null> {
  return mongo.c.users.findOne({ _id: userId }, { projection: { maxConcurrentRuns: 1, runSlots: 1 } });
}

/** Gives a slot back (idempotent). */
export async function pullRunSlot(mongo: Mongo, userId: string, key: string): Promise<void> {
  await mongo.c.users.updateOne({ _id: userId }, { $pull: { runSlots: key } });
}

/** Every user holding at least one slot, with their slots. */
export function findUsersHoldingSlots(mongo: Mongo): Promise<Array<Pick<UserDoc, "_id" | "runSlots">>> {
  return mongo.c.users.find({ "runSlots.0": { $exists: true } }, { projection: { runSlots: 1 } }).toArray();
}
