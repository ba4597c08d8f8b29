/**
 * The `apiKeys` collection. Keys are found by the SHA-256 of the presented secret (unique index
 * `hash`); listings and single reads for the API leave the hash out.
 */
import type { ApiKeyDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/** Keys of `ownerId` neither revoked nor expired at `now`. */
export function countActiveKeys(mongo: Mongo, ownerId: string, now: Date): Promise<number> {
  return mongo.c.apiKeys.countDocuments({ ownerId, revokedAt: null, $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] });
}

export async function insertKey(mongo: Mongo, doc: ApiKeyDoc): Promise<void> {
  await mongo.c.apiKeys.insertOne(doc);
}

/** Deletes one key outright (a key taken back before it was ever shown, see ApiKeyService.create). */
export async function deleteKey(mongo: Mongo, id: string): Promise<void> {
  await mongo.c.apiKeys.deleteOne({ _id: id });
}

/** Keys of one owner (or of everyone with null), newest first, revoked ones included, without their hash; at most 1,000. */
export function listKeys(mongo: Mongo, ownerId: string | null): Promise<ApiKeyDoc[]> {
  return mongo.c.apiKeys
    .find(ownerId === null ? {} : { ownerId }, { projection: { hash: 0 } })
    .sort({ createdAt: -1, _id: -1 })
    .limit(1_000)
    .toArray();
}

/** One key without its hash. */
export function findKeyWithoutHash(mongo: Mongo, id: string): Promise<ApiKeyDoc | null> {
  return mongo.c.apiKeys.findOne({ _id: id }, { projection: { hash: 0 } });
}

export function findKey(mongo: Mongo, id: string): Promise<ApiKeyDoc | null> {
  return mongo.c.apiKeys.findOne({ _id: id });
}

export function findKeyByHash(mongo: Mongo, hash: string): Promise<ApiKeyDoc | null> {
  return mongo.c.apiKeys.findOne({ hash });
}

/** Revokes a key not revoked yet (a revoked key keeps its first revocation time). */
export async function revokeKey(mongo: Mongo, id: string, at: Date): Promise<void> {
  await mongo.c.apiKeys.updateOne({ _id: id, revokedAt: null }, { $set: { revokedAt: at } });
}

/** The hashes of an owner's keys (to drop them from caches before deleting them). */
export function findOwnerKeyHashes(mongo: Mongo, ownerId: string): Promise<Array<Pick<ApiKeyDoc, "_id" | "hash">>> {
  return mongo.c.apiKeys.find({ ownerId }, { projection: { hash: 1 } }).toArray();
}

/** Deletes every key of an owner; the number deleted. */
export async function deleteOwnerKeys(mongo: Mongo, ownerId: string): Promise<number> {
  return (await mongo.c.apiKeys.deleteMany({ ownerId })).deletedCount;
}

/**
 * Sets `lastUsedAt` to `at` unless it was already set after `notBefore`: conditional, so N API
 * instances write it at most N times per period, usually once.
 */
export async function recordKeyUse(mongo: Mongo, id: string, at: Date, notBefore: Date): Promise<void> {
  await mongo.c.apiKeys.updateOne(
    { _id: id, $or: [{ lastUsedAt: null }, { lastUsedAt: { $lt: notBefore } }] },
    { $set: { lastUsedAt: at } },
  );
}
