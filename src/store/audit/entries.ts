/**
 * The audit trail's queries (docs/audit.md): entries in `audit`, one per mutation call, unique by
 * `seq` (the chain's order: an entry is appended by inserting `seq` = the head's + 1, so of two API
 * instances appending at once exactly one wins each link and the other re-reads the head), the
 * chain's `anchor`, `head` and `keyed` records in `auditChain`, and the calls under way (their
 * intents, written before the mutation runs) in `auditIntents`.
 */
import type { Collection, Filter } from "mongodb";
import { AUDIT_GENESIS_HASH, ValidationError, type AuditChainDoc, type AuditEntryDoc, type AuditIntentDoc } from "../../domain/index.js";
import { InsertBatcher } from "../batch.js";
import type { Mongo } from "../mongo.js";
import type { Page, PageQuery } from "../pages.js";

const entries = (mongo: Mongo): Collection<AuditEntryDoc> => mongo.db.collection<AuditEntryDoc>("audit");
const chain = (mongo: Mongo): Collection<AuditChainDoc> => mongo.db.collection<AuditChainDoc>("auditChain");
const intents = (mongo: Mongo): Collection<AuditIntentDoc> => mongo.db.collection<AuditIntentDoc>("auditIntents");

/** A record's signature by the audit key (src/core/audit/keys.ts). */
export interface AuditSignature {
  keyId: string;
  mac: string;
}

/** The audit collections' indexes (idempotent; the audit service runs it before its first write or read). */
export async function ensureAuditIndexes(mongo: Mongo): Promise<void> {
  await entries(mongo).createIndexes([
    // The chain: one entry per link. A second writer of the same link gets a duplicate key.
    { key: { seq: 1 }, name: "seq_unique", unique: true },
    // auditLog's filters, each in the page's order (newest first, by seq).
    { key: { "actor.userId": 1, seq: -1 }, name: "actor_seq" },
    { key: { action: 1, seq: -1 }, name: "action_seq" },
    { key: { targetIds: 1, seq: -1 }, name: "target_seq" },
    // Retention and time ranges.
    { key: { at: 1 }, name: "at" },
  ]);
  // The recovery pass looks for the oldest intents.
  await intents(mongo).createIndexes([{ key: { at: 1 }, name: "at" }]);
}

/** The last link of the chain: the highest entry, else the anchor (everything was truncated), else the genesis. */
export async function auditHead(mongo: Mongo): Promise<{ seq: number; hash: string }> {
  const [last] = await entries(mongo).find({}, { projection: { seq: 1, hash: 1 } }).sort({ seq: -1 }).limit(1).toArray();
  if (last) return { seq: last.seq, hash: last.hash };
  const anchor = await chain(mongo).findOne({ _id: "anchor" });
  return anchor ? { seq: anchor.seq, hash: anchor.hash } : { seq: 0, hash: AUDIT_GENESIS_HASH };
}

interface WriteErrorLike {
  index?: number;
  code?: number;
}

/**
 * Inserts chained entries in order. Resolves with how many were inserted: all of them, or those
 * before the first whose `seq` another writer took (a duplicate key; the caller re-reads the head
 * and chains the rest again). Any other failure rejects.
 */
export async function insertAuditEntries(mongo: Mongo, docs: AuditEntryDoc[]): Promise<number> {
  if (docs.length === 0) return 0;
  try {
    await entries(mongo).insertMany(docs, { ordered: true });
    return docs.length;
  } catch (e) {
    const raw = (e as { writeErrors?: WriteErrorLike[] | WriteErrorLike; code?: number } | null)?.writeErrors;
    const first = Array.isArray(raw) ? raw[0] : raw;
    const code = first?.code ?? (e as { code?: number }).code;
    if (code !== 11000) throw e;
    return first?.index ?? 0;
  }
}

/** Records the highest entry written (only ever raised), signed, so entries removed from the end are noticed. */
export async function raiseAuditHead(mongo: Mongo, seq: number, hash: string, signed: AuditSignature): Promise<void> {
  await chain(mongo).updateOne({ _id: "head", seq: { $lt: seq } }, { $set: { seq, hash, keyId: signed.keyId, mac: signed.mac } });
}

/**
 * Records where keyed entries begin, if no record says so yet: the entry after the current last
 * (`sign` signs its seq and time). Of two instances starting at once, the first record stays.
 */
export async function ensureAuditKeyedRecord(mongo: Mongo, at: Date, sign: (seq: number, at: Date) => AuditSignature): Promise<void> {
  if (await chain(mongo).findOne({ _id: "keyed" })) return;
  const seq = (await auditHead(mongo)).seq + 1;
  try {
    await chain(mongo).insertOne({ _id: "keyed", seq, hash: "", at, ...sign(seq, at) });
  } catch (e) {
    if ((e as { code?: number }).code !== 11000) throw e;
  }
}

/** Creates the head record if there is none (idempotent). */
export async function ensureAuditHeadRecord(mongo: Mongo): Promise<void> {
  await chain(mongo).updateOne({ _id: "head" }, { $setOnInsert: { seq: 0, hash: AUDIT_GENESIS_HASH } }, { upsert: true });
}

export async function auditChainRecords(mongo: Mongo): Promise<{ anchor: AuditChainDoc | null; head: AuditChainDoc | null; keyed: AuditChainDoc | null }> {
  const docs = await chain(mongo).find({}).toArray();
  return { anchor: docs.find((d) => d._id === "anchor") ?? null, head: docs.find((d) => d._id === "head") ?? null, keyed: docs.find((d) => d._id === "keyed") ?? null };
}

/** Every entry in chain order (seq ascending), read in batches. */
export function auditEntriesInOrder(mongo: Mongo): AsyncIterable<AuditEntryDoc> {
  return entries(mongo).find({}).sort({ seq: 1 }).batchSize(1_000);
}

/**
 * Retention: the entries up to the last one older than `cutoff` (in chain order) are removed, the
 * anchor first moved to that entry, so the oldest kept entry still links to a recorded hash. A
 * crash between the two leaves entries at or below the anchor, which verification skips and the
 * next pass removes. The anchor is signed (`sign`, over its seq, hash, time of the cut and retention).
 * Resolves with the new anchor's seq and how many entries were removed, or null.
 */
export async function truncateAuditBefore(
  mongo: Mongo,
  cutoff: Date,
  now: Date,
  retentionMs: number,
  sign: (anchor: { seq: number; hash: string; truncatedAt: Date; retentionMs: number }) => AuditSignature,
): Promise<{ anchorSeq: number; removed: number } | null> {
  const [last] = await entries(mongo).find({ at: { $lt: cutoff } }).sort({ seq: -1 }).limit(1).toArray();
  if (!last) return null;
  const anchors = chain(mongo);
  // The anchored entry is kept whole in the anchor: verification re-hashes it, so its age (what
  // retention may have removed) cannot be changed without the chain noticing.
  const record = { seq: last.seq, hash: last.hash, at: last.at, truncatedAt: now, retentionMs, entry: last, ...sign({ seq: last.seq, hash: last.hash, truncatedAt: now, retentionMs }) };
  const moved = await anchors.updateOne({ _id: "anchor", seq: { $lt: last.seq } }, { $set: record });
  if (moved.matchedCount === 0) {
    try {
      await anchors.insertOne({ _id: "anchor", ...record });
    } catch (e) {
      // Another instance anchored meanwhile (at this entry or a later one): remove up to its anchor.
      if ((e as { code?: number }).code !== 11000) throw e;
    }
  }
  const anchor = await anchors.findOne({ _id: "anchor" });
  const through = Math.max(anchor?.seq ?? 0, 0);
  const { deletedCount } = await entries(mongo).deleteMany({ seq: { $lte: through } });
  return { anchorSeq: through, removed: deletedCount };
}

/** Of these entry ids, those stored. */
export async function storedAuditEntryIds(mongo: Mongo, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const docs = await entries(mongo).find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray();
  return new Set(docs.map((d) => d._id));
}

/** Intent inserts of one event-loop turn (the calls of the same moment), as one insertMany. */
export function createAuditIntentBatch(mongo: Mongo): InsertBatcher<AuditIntentDoc> {
  return new InsertBatcher(intents(mongo));
}

/** Stores the intent of a call about to run; resolves once it is stored. */
export function insertAuditIntent(batch: InsertBatcher<AuditIntentDoc>, doc: AuditIntentDoc): Promise<void> {
  return batch.insertOne(doc);
}

/** Removes the intents of calls whose entries are written. */
export async function deleteAuditIntents(mongo: Mongo, ids: string[]): Promise<void> {
  if (ids.length > 0) await intents(mongo).deleteMany({ _id: { $in: ids } });
}

/** The oldest intents of calls started before `before` (at most `limit`). */
export async function staleAuditIntents(mongo: Mongo, before: Date, limit: number): Promise<AuditIntentDoc[]> {
  return intents(mongo).find({ at: { $lt: before } }).sort({ at: 1 }).limit(limit).toArray();
}

/** auditLog's filter, the caller's visibility already applied. */
export interface AuditQuery {
  actorUserId?: string | null;
  apiKeyId?: string | null;
  actions?: string[] | null;
  targetId?: string | null;
  from?: Date | null;
  to?: Date | null;
  outcome?: string | null;
}

function encodeSeqCursor(seq: number): string {
  return Buffer.from(JSON.stringify(["audit", seq])).toString("base64url");
}

function decodeSeqCursor(cursor: string): number {
  try {
    const [kind, seq] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [unknown, unknown];
    if (kind === "audit" && typeof seq === "number" && Number.isFinite(seq)) return seq;
  } catch {
    // fall through
  }
  throw new ValidationError("after", "not a cursor returned by auditLog (use pageInfo.endCursor)");
}

/** A page of entries, newest first (by seq). */
export async function auditPage(mongo: Mongo, q: AuditQuery, page: PageQuery): Promise<Page<AuditEntryDoc>> {
  const filter: Filter<AuditEntryDoc> = {};
  if (q.actorUserId != null) filter["actor.userId"] = q.actorUserId;
  if (q.apiKeyId != null) filter["actor.apiKeyId"] = q.apiKeyId;
  if (q.actions?.length) filter.action = q.actions.length === 1 ? q.actions[0]! : { $in: q.actions };
  if (q.targetId != null) filter.targetIds = q.targetId;
  if (q.outcome != null) filter.outcome = q.outcome;
  if (q.from != null || q.to != null) filter.at = { ...(q.from != null ? { $gte: q.from } : {}), ...(q.to != null ? { $lt: q.to } : {}) };
  if (page.after) filter.seq = { $lt: decodeSeqCursor(page.after) };
  const docs = await entries(mongo).find(filter).sort({ seq: -1 }).limit(page.size + 1).toArray();
  const kept = docs.slice(0, page.size);
  const edges = kept.map((d) => ({ cursor: encodeSeqCursor(d.seq), node: d }));
  return { edges, pageInfo: { hasNextPage: docs.length > page.size, endCursor: edges.at(-1)?.cursor ?? null } };
}
