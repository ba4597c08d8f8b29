/** The `artifacts` collection: uploads and verified artifacts (domain/artifacts.ts). */
import type { Filter } from "mongodb";
import { ArtifactStatus, type ArtifactDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";
import { afterDesc, toPage, type Page, type PageQuery } from "../pages.js";

export function insertArtifact(mongo: Mongo, doc: ArtifactDoc): Promise<unknown> {
  return mongo.c.artifacts.insertOne(doc);
}

export function findArtifact(mongo: Mongo, id: string): Promise<ArtifactDoc | null> {
  return mongo.c.artifacts.findOne({ _id: id });
}

/** A page of artifacts (of `ownerId`; null: everyone's), newest first. */
export async function listArtifacts(mongo: Mongo, ownerId: string | null, page: PageQuery): Promise<Page<ArtifactDoc>> {
  const q: Filter<ArtifactDoc> = ownerId === null ? {} : { ownerId };
  const docs = await mongo.c.artifacts
    .find({ ...q, ...afterDesc("createdAt", page.after) })
    .sort({ createdAt: -1, _id: -1 })
    .limit(page.size + 1)
    .toArray();
  return toPage(docs, page.size, (d) => d.createdAt);
}

/** How many uploads of the owner are still PENDING. */
export function countPendingArtifacts(mongo: Mongo, ownerId: string): Promise<number> {
  return mongo.c.artifacts.countDocuments({ ownerId, status: ArtifactStatus.PENDING });
}

/** PENDING → COMPLETE, only if it is still PENDING (the sweep may have taken it). */
export async function markArtifactComplete(mongo: Mongo, id: string, blobKey: string, at: Date): Promise<ArtifactDoc | null> {
  return mongo.c.artifacts.findOneAndUpdate(
    { _id: id, status: ArtifactStatus.PENDING },
    { $set: { status: ArtifactStatus.COMPLETE, blobKey, completedAt: at, expiresAt: null, purgeAt: null } },
    { returnDocument: "after" },
  );
}

/** COMPLETE → DELETING (a deletion starts); null when it is not COMPLETE (gone, pending, or being deleted). */
export function markArtifactDeleting(mongo: Mongo, id: string, at: Date): Promise<ArtifactDoc | null> {
  return mongo.c.artifacts.findOneAndUpdate(
    { _id: id, status: ArtifactStatus.COMPLETE },
    { $set: { status: ArtifactStatus.DELETING, deletingAt: at } },
    { returnDocument: "after" },
  );
}

/** DELETING → COMPLETE (a deletion refused). */
export async function unmarkArtifactDeleting(mongo: Mongo, id: string): Promise<void> {
  await mongo.c.artifacts.updateOne({ _id: id, status: ArtifactStatus.DELETING }, { $set: { status: ArtifactStatus.COMPLETE, deletingAt: null } });
}

/** Deletes the document if it is still in `status`; whether it did. */
export async function deleteArtifactRecord(mongo: Mongo, id: string, status: ArtifactStatus): Promise<boolean> {
  return (await mongo.c.artifacts.deleteOne({ _id: id, status })).deletedCount === 1;
}

/** PENDING uploads whose time ran out, oldest first. */
export function findExpiredUploads(mongo: Mongo, now: Date, limit: number): Promise<ArtifactDoc[]> {
  return mongo.c.artifacts.find({ status: ArtifactStatus.PENDING, expiresAt: { $lte: now } }).sort({ expiresAt: 1 }).limit(limit).toArray();
}

/** Artifacts left DELETING since before `before` by a deletion that stopped half-way (a crash). */
export function findStaleDeletions(mongo: Mongo, before: Date, limit: number): Promise<ArtifactDoc[]> {
  return mongo.c.artifacts.find({ status: ArtifactStatus.DELETING, deletingAt: { $lte: before } }).limit(limit).toArray();
}

/** Which of `ids` have a document (any status). */
export async function existingArtifactIds(mongo: Mongo, ids: readonly string[]): Promise<Map<string, ArtifactDoc>> {
  const docs = await mongo.c.artifacts.find({ _id: { $in: [...ids] } }).toArray();
  return new Map(docs.map((d) => [d._id, d]));
}

/** Up to `limit` artifacts of `ownerId`, any status (a deleted user's, to delete). */
export function findArtifactsOfOwner(mongo: Mongo, ownerId: string, limit: number): Promise<ArtifactDoc[]> {
  return mongo.c.artifacts.find({ ownerId }).limit(limit).toArray();
}

/** Deletes the document whatever its status. */
export async function removeArtifactRecord(mongo: Mongo, id: string): Promise<void> {
  await mongo.c.artifacts.deleteOne({ _id: id });
}
