/**
 * The `users` collection as HTTP jobs' signing secrets (core/http-signing.ts): read by executors,
 * made once (first HTTP run), rotated by the user. Each write is one conditional update.
 */
import type { UserDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

export type HttpSigningDoc = NonNullable<UserDoc["httpSigning"]>;

export async function findHttpSigning(mongo: Mongo, userId: string): Promise<HttpSigningDoc | null> {
  const u = await mongo.c.users.findOne({ _id: userId }, { projection: { httpSigning: 1 } });
  return u?.httpSigning ?? null;
}

/** Sets the user's first secret unless one is there already; returns the one in force (null: no such user). */
export async function initHttpSigning(mongo: Mongo, userId: string, first: HttpSigningDoc): Promise<HttpSigningDoc | null> {
  await mongo.c.users.updateOne({ _id: userId, httpSigning: null }, { $set: { httpSigning: first } });
  return findHttpSigning(mongo, userId);
}

/**
 * Replaces the secret `expectedCurrent` (null: none yet) by `next`, atomically: false when another
 * rotation came first (the caller reads again and retries).
 */
export async function swapHttpSigning(mongo: Mongo, userId: string, expectedCurrent: string | null, next: HttpSigningDoc): Promise<boolean> {
  const filter = expectedCurrent === null ? { _id: userId, httpSigning: null } : { _id: userId, "httpSigning.current": expectedCurrent };
  const r = await mongo.c.users.updateOne(filter, { $set: { httpSigning: next } });
  return r.modifiedCount === 1;
}
