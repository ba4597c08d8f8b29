/**
 * The `users` collection as accounts: lookups by id and name, creation, and the changes an
 * administrator or the user makes (password, token version, disabled, limit, deletion). The run
 * slots a user holds are another concern (the run claims). Writes return the document after the
 * change, or null when no user matched.
 */
import type { Filter } from "mongodb";
import type { UserDoc } from "../../domain/index.js";
import { isDuplicateKey, type Mongo } from "../mongo.js";
import { nameAfter, prefixRange, toNamePage, type Page, type PageQuery } from "../pages.js";

/** What authentication needs of a user, without the password hash or the run slots. */
export function findAccountFacts(mongo: Mongo, userId: string): Promise<UserDoc | null> {
  return mongo.c.users.findOne({ _id: userId }, { projection: { passwordHash: 0, runSlots: 0 } }) as Promise<UserDoc | null>;
}

export function findUser(mongo: Mongo, userId: string): Promise<UserDoc | null> {
  return mongo.c.users.findOne({ _id: userId });
}

export function findUserByName(mongo: Mongo, username: string): Promise<UserDoc | null> {
  return mongo.c.users.findOne({ username });
}

/** Which users a listing shows (of those not being deleted): of one role, whose name starts with a prefix (case-sensitive). */
export interface UserListing {
  role?: UserDoc["role"] | null;
  usernamePrefix?: string | null;
}

/**
 * A page of the users not being deleted, by name: `username` is unique, so a user added or
 * deleted meanwhile moves no other and a page never repeats or skips one. The name prefix and the
 * cursor are bounds of one range of the unique `username` index (username_unique).
 */
export async function listLiveUsers(mongo: Mongo, match: UserListing, page: PageQuery): Promise<Page<UserDoc>> {
  const q: Filter<UserDoc> = { deletedAt: null };
  if (match.role) q.role = match.role;
  const range: { $gte?: string; $lt?: string; $gt?: string } = {};
  if (match.usernamePrefix) Object.assign(range, prefixRange(match.usernamePrefix));
  const after = nameAfter(page.after);
  if (after !== null) range.$gt = after;
  if (Object.keys(range).length > 0) q.username = range;
  const docs = await mongo.c.users
    .find(q, { projection: { passwordHash: 0, runSlots: 0, httpSigning: 0 } })
    .sort({ username: 1 })
    .limit(page.size + 1)
    .toArray();
  return toNamePage(docs, page.size, (d) => d.username);
}

export function findUsersByIds(mongo: Mongo, ids: readonly string[]): Promise<UserDoc[]> {
  return mongo.c.users.find({ _id: { $in: [...ids] } }).toArray();
}

/** False when the user name is taken (the unique index on `username`). */
export async function insertUser(mongo: Mongo, doc: UserDoc): Promise<boolean> {
  try {
    await mongo.c.users.insertOne(doc);
    return true;
  } catch (e) {
    if (isDuplicateKey(e)) return false;
    throw e;
  }
}

/** Sets a new password hash and revokes earlier tokens, only if the hash is still `currentHash` (no concurrent change). */
export function replacePassword(mongo: Mongo, userId: string, currentHash: string, nextHash: string, at: Date): Promise<UserDoc | null> {
  return mongo.c.users.findOneAndUpdate(
    { _id: userId, passwordHash: currentHash },
    { $set: { passwordHash: nextHash, updatedAt: at }, $inc: { tokenVersion: 1 } },
    { returnDocument: "after" },
  );
}

/** Revokes every token issued so far (bumps the token version) of a user not being deleted. */
export function bumpTokenVersion(mongo: Mongo, userId: string, at: Date): Promise<UserDoc | null> {
  return mongo.c.users.findOneAndUpdate(
    { _id: userId, deletedAt: null },
    { $inc: { tokenVersion: 1 }, $set: { updatedAt: at } },
    { returnDocument: "after" },
  );
}

export function setUserDisabled(mongo: Mongo, userId: string, disabled: boolean, at: Date): Promise<UserDoc | null> {
  return mongo.c.users.findOneAndUpdate(
    { _id: userId, deletedAt: null },
    { $set: { disabled, updatedAt: at } },
    { returnDocument: "after" },
  );
}

export function setUserConcurrencyLimit(mongo: Mongo, userId: string, maxConcurrentRuns: number | null, at: Date): Promise<UserDoc | null> {
  return mongo.c.users.findOneAndUpdate(
    { _id: userId },
    { $set: { maxConcurrentRuns, updatedAt: at } },
    { returnDocument: "after" },
  );
}

/** Marks a user deleted; returns the document as it was BEFORE (its `deletedAt` tells a resumed deletion). */
export function markUserDeleted(mongo: Mongo, userId: string, at: Date): Promise<UserDoc | null> {
  return mongo.c.users.findOneAndUpdate({ _id: userId }, { $set: { deletedAt: at, updatedAt: at } }, { returnDocument: "before" });
}

export async function deleteUser(mongo: Mongo, userId: string): Promise<void> {
  await mongo.c.users.deleteOne({ _id: userId });
}

/** The bootstrap admin's password from the environment: sets it and the ADMIN role, and revokes tokens issued under the old one. */
export async function resetAdminPassword(mongo: Mongo, userId: string, passwordHash: string, at: Date): Promise<void> {
  await mongo.c.users.updateOne(
    { _id: userId },
    { $set: { passwordHash, role: "ADMIN", updatedAt: at }, $inc: { tokenVersion: 1 } },
  );
}
