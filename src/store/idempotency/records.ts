/**
 * The `idempotency` collection: one record per (owner, key), unique on `{ownerId, key}` so that
 * exactly one of racing requests inserts it. The protocol is in src/core/idempotency.ts.
 */
import type { IdempotencyDoc } from "../../domain/index.js";
import { isDuplicateKey, type Mongo } from "../mongo.js";

/** True when this record is the first for its owner and key; false when one exists. */
export async function insertRecord(mongo: Mongo, record: IdempotencyDoc): Promise<boolean> {
  try {
    await mongo.c.idempotency.insertOne(record);
    return true;
  } catch (e) {
    if (isDuplicateKey(e)) return false;
    throw e;
  }
}

export function findRecord(mongo: Mongo, ownerId: string, key: string): Promise<IdempotencyDoc | null> {
  return mongo.c.idempotency.findOne({ ownerId, key });
}

/** Deletes the record if it expired by `now` (the TTL monitor deletes late). */
export async function deleteExpiredRecord(mongo: Mongo, id: string, now: Date): Promise<void> {
  await mongo.c.idempotency.deleteOne({ _id: id, expiresAt: { $lte: now } });
}

/**
 * Takes a PENDING record over: moves its lease to `leaseUntil`, only if its lease is still
 * `expiredLease` (so one of racing repeats wins). The record after, or null for the losers.
 */
export function takeOverRecord(mongo: Mongo, id: string, expiredLease: Date, leaseUntil: Date): Promise<IdempotencyDoc | null> {
  return mongo.c.idempotency.findOneAndUpdate(
    { _id: id, state: "PENDING", leaseUntil: expiredLease },
    { $set: { leaseUntil } },
    { returnDocument: "after" },
  );
}

/** Frees the key after a failed first request (a DONE record is kept). */
export async function deletePendingRecord(mongo: Mongo, id: string): Promise<void> {
  await mongo.c.idempotency.deleteOne({ _id: id, state: "PENDING" });
}

/** Stores what the operation made. */
export async function completeRecord(mongo: Mongo, id: string, result: Record<string, unknown>): Promise<void> {
  await mongo.c.idempotency.updateOne({ _id: id }, { $set: { state: "DONE", result } });
}

export async function deleteOwnerRecords(mongo: Mongo, ownerId: string): Promise<void> {
  await mongo.c.idempotency.deleteMany({ ownerId });
}
