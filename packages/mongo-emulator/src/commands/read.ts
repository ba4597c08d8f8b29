/**
 * find, getMore, killCursors, count and distinct.
 */
import { Long } from "bson";
import type { Collection } from "../collection.js";
import { DEFAULT_FIRST_BATCH, takeBatch } from "../cursors.js";
import { commandError } from "../errors.js";
import { pathValues } from "../indexes.js";
import { findMatching, findOrdered, orderedPlan, type OrderedPlan } from "../plan.js";
import { compileProjection } from "../projection.js";
import { parseSort, sortBy } from "../sort.js";
import { canonKey, type Doc } from "../values.js";
import { collectionArg, optBool, optDoc, optInt, type CommandContext, type CommandSpec } from "./context.js";
import { hintCheck } from "./write.js";

const ZERO = Long.fromNumber(0);

function nonNegative(ctx: CommandContext, field: string, label: string): number | undefined {
  const n = optInt(ctx, field);
  if (n !== undefined && n < 0) throw commandError("BadValue", `${label} value must be non-negative, but received: ${n}`);
  return n;
}

/** The index-ordered scan a find would use (orderedPlan: a sort and a limit are needed), or null. */
export function findOrderedPlan(coll: Collection, filter: Doc | undefined, sort: Doc | undefined, limit: number): OrderedPlan | null {
  if (!sort || limit <= 0) return null;
  const order = parseSort(sort);
  return order.natural === null ? orderedPlan(coll, filter, order.fields) : null;
}

/** Matching documents after sort/skip/limit, as stored (exact) documents. */
export function queryDocs(ctx: CommandContext, coll: Collection, filter: Doc | undefined, sort: Doc | undefined, skip: number, limit: number): Doc[] {
  const stats = ctx.engine.stats;
  const order = sort ? parseSort(sort) : { fields: [], natural: null };
  const ordered = findOrderedPlan(coll, filter, sort, limit);
  if (ordered) return findOrdered(coll, ordered, filter, stats, skip + limit).slice(skip).map((r) => r.doc);
  if (order.fields.length > 0 || order.natural === -1) {
    const sorted = sortBy(findMatching(coll, filter, stats), sort!, (r) => r.doc);
    return sorted.slice(skip, limit > 0 ? skip + limit : undefined).map((r) => r.doc);
  }
  const recs = findMatching(coll, filter, stats, limit > 0 ? skip + limit : 0);
  const out: Doc[] = new Array(Math.max(0, recs.length - skip));
  for (let i = skip; i < recs.length; i++) out[i - skip] = recs[i].doc;
  return out;
}

/** First batch of a result set, registering a cursor for the rest (unless singleBatch). */
export function cursorReply(
  ctx: CommandContext,
  ns: string,
  items: Doc[],
  batchSize: number | undefined,
  project: ((d: Doc) => Doc) | null,
  singleBatch = false,
): Doc {
  const first = batchSize === 0 ? { batch: [], pos: 0 } : takeBatch(items, 0, batchSize ?? DEFAULT_FIRST_BATCH, project);
  let id = ZERO;
  if (first.pos < items.length && !singleBatch) {
    id = ctx.engine.cursors.create(ns, items, first.pos, project, optBool(ctx, "noCursorTimeout") ?? false).id;
  }
  return { cursor: { firstBatch: first.batch, id, ns }, ok: 1 };
}

const find: CommandSpec = {
  fields: [
    "find",
    "filter",
    "sort",
    "projection",
    "skip",
    "limit",
    "batchSize",
    "singleBatch",
    "hint",
    "noCursorTimeout",
    "allowPartialResults",
    "allowDiskUse",
    "readOnce",
  ],
  unsupported: ["collation", "let", "min", "max", "returnKey", "showRecordId", "tailable", "awaitData", "oplogReplay"],
  run(ctx) {
    ctx.engine.stats.opcounters.query++;
    const name = collectionArg(ctx);
    const filter = optDoc(ctx, "filter");
    const sort = optDoc(ctx, "sort");
    const project = compileProjection(optDoc(ctx, "projection"));
    const skip = nonNegative(ctx, "skip", "Skip") ?? 0;
    const limit = nonNegative(ctx, "limit", "Limit") ?? 0;
    const batchSize = nonNegative(ctx, "batchSize", "BatchSize");
    const ns = `${ctx.db}.${name}`;
    const coll = ctx.engine.collection(ctx.db, name);
    hintCheck(ctx, coll, ctx.body.hint);
    if (!coll) return { cursor: { firstBatch: [], id: ZERO, ns }, ok: 1 };
    const items = queryDocs(ctx, coll, filter, sort, skip, limit);
    return cursorReply(ctx, ns, items, batchSize, project, optBool(ctx, "singleBatch") ?? false);
  },
};

const getMore: CommandSpec = {
  fields: ["getMore", "collection", "batchSize"],
  unsupported: ["term", "lastKnownCommittedOpTime"],
  run(ctx) {
    ctx.engine.stats.opcounters.getmore++;
    const id = ctx.body.getMore;
    const collection = ctx.body.collection;
    if (typeof collection !== "string") throw commandError("TypeMismatch", "BSON field 'getMore.collection' is the wrong type, expected type 'string'");
    const cursor = ctx.engine.cursors.get(id);
    if (!cursor) throw commandError("CursorNotFound", `cursor id ${String(id)} not found`);
    const ns = `${ctx.db}.${collection}`;
    if (cursor.ns !== ns) {
      throw commandError("Unauthorized", `Requested getMore on namespace '${ns}', but cursor belongs to a different namespace ${cursor.ns}`);
    }
    const batchSize = nonNegative(ctx, "batchSize", "BatchSize") ?? 0;
    const { batch, pos } = takeBatch(cursor.items, cursor.pos, batchSize, cursor.project);
    cursor.pos = pos;
    cursor.lastUsed = ctx.now.getTime();
    const done = pos >= cursor.items.length;
    if (done) ctx.engine.cursors.kill(id);
    return { cursor: { nextBatch: batch, id: done ? ZERO : cursor.id, ns }, ok: 1 };
  },
};

const killCursors: CommandSpec = {
  fields: ["killCursors", "cursors"],
  run(ctx) {
    collectionArg(ctx);
    const ids = ctx.body.cursors;
    if (!Array.isArray(ids)) throw commandError("TypeMismatch", "BSON field 'killCursors.cursors' is the wrong type, expected type 'array'");
    const killed: unknown[] = [];
    const notFound: unknown[] = [];
    for (const id of ids) (ctx.engine.cursors.kill(id) ? killed : notFound).push(id);
    return { cursorsKilled: killed, cursorsNotFound: notFound, cursorsAlive: [], cursorsUnknown: [], ok: 1 };
  },
};

const count: CommandSpec = {
  fields: ["count", "query", "limit", "skip", "hint", "fields"],
  unsupported: ["collation"],
  run(ctx) {
    const name = collectionArg(ctx);
    const query = optDoc(ctx, "query");
    const skip = Math.max(0, optInt(ctx, "skip") ?? 0);
    const limit = Math.abs(optInt(ctx, "limit") ?? 0);
    const coll = ctx.engine.collection(ctx.db, name);
    hintCheck(ctx, coll, ctx.body.hint);
    if (!coll) return { n: 0, ok: 1 };
    let n: number;
    if (!query || Object.keys(query).length === 0) n = coll.docs.size;
    else n = findMatching(coll, query, ctx.engine.stats, limit > 0 ? skip + limit : 0).length;
    n = Math.max(0, n - skip);
    if (limit > 0) n = Math.min(n, limit);
    return { n, ok: 1 };
  },
};

const distinct: CommandSpec = {
  fields: ["distinct", "key", "query", "hint"],
  unsupported: ["collation"],
  run(ctx) {
    const name = collectionArg(ctx);
    const key = ctx.body.key;
    if (typeof key !== "string") throw commandError("TypeMismatch", "BSON field 'distinct.key' is the wrong type, expected type 'string'");
    const query = optDoc(ctx, "query");
    const coll = ctx.engine.collection(ctx.db, name);
    hintCheck(ctx, coll, ctx.body.hint);
    if (!coll) return { values: [], ok: 1 };
    const seen = new Set<string>();
    const values: unknown[] = [];
    for (const rec of findMatching(coll, query, ctx.engine.stats)) {
      for (const v of pathValues(rec.doc, key)) {
        if (v === undefined) continue;
        const k = canonKey(v);
        if (seen.has(k)) continue;
        seen.add(k);
        values.push(v);
      }
    }
    return { values, ok: 1 };
  },
};

export const readCommands: Record<string, CommandSpec> = { find, getMore, killCursors, count, distinct };
