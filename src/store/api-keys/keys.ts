/**
 * The `apiKeys` collection. Keys are found by the SHA-256 of the presented secret (unique index
 * `hash`); listings and single reads for the API leave the hash out.
 */
import type { Filter } from "mongodb";
import type { ApiKeyDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";
import { afterDesc, toPage, type Page, type PageQuery } from "../pages.js";

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

/** Which keys of an owner a listing shows: `revoked` true only revoked ones, false only those not revoked, null both. */
export interface KeyListing {
  ownerId: string;
  revoked?: boolean | null;
}

/**
 * A page of one owner's keys, newest first (`createdAt`, then `_id`: a unique order that inserts
 * and revocations do not move), without their hash. Indexed: owner_created_id.
 */
export async function listKeys(mongo: Mongo, match: KeyListing, page: PageQuery): Promise<Page<ApiKeyDoc>> {
  const q: Filter<ApiKeyDoc> = { ownerId: match.ownerId };
  if (match.revoked === true) q.revokedAt = { $ne: null };
  if (match.revoked === false) q.revokedAt = null;
  const docs = await mongo.c.apiKeys
    .find({ ...q, ...afterDesc("createdAt", page.after) } as Filter<ApiKeyDoc>, { projection: { hash: 0 } })
    .sort({ createdAt: -1, _id: -1 })
    .limit(page.size + 1)
    .toArray();
  return toPage(docs, page.size, (d) => d.createdAt);
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
