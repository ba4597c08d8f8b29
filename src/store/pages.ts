/**
 * Cursor pages over a `{key: -1, _id: -1}` (newest first) order. A cursor is base64url of
 * `[sortKeyMs, id]`: stable under inserts, opaque to clients. A page is read with `limit: size + 1`;
 * the extra document only tells whether a next page exists. A list in the order of a unique name
 * (users by username) pages the same way with a cursor of `[name, id]` (nameAfter, toNamePage); the
 * nodes, by name then latest start, with `[name, startedAtMs, id]` (nodeAfter, toNodePage).
 */
import { ValidationError } from "../domain/index.js";

/** Which page to read: at most `size` documents after the cursor `after` (none: the first page). */
export interface PageQuery {
  size: number;
  after?: string | null;
}

/** A page as the API returns it (a Relay connection), its nodes still documents. */
export interface Page<T> {
  edges: Array<{ cursor: string; node: T }>;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

export function encodeCursor(sortKey: Date | number, id: string): string {
  const ms = sortKey instanceof Date ? sortKey.getTime() : sortKey;
  return Buffer.from(JSON.stringify([ms, id])).toString("base64url");
}

export function decodeCursor(cursor: string): { sortKey: Date; id: string } {
  try {
    const [ms, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [unknown, unknown];
    if (typeof ms === "number" && typeof id === "string") return { sortKey: new Date(ms), id };
  } catch {
    // fall through
  }
  throw new ValidationError("after", "not a cursor returned by this API (use pageInfo.endCursor)");
}

/** Mongo filter for "after this cursor" in a `{key: -1, _id: -1}` (newest first) order. */
export function afterDesc(key: string, cursor: string | null | undefined): Record<string, unknown> {
  if (!cursor) return {};
  const { sortKey, id } = decodeCursor(cursor);
  return { $or: [{ [key]: { $lt: sortKey } }, { [key]: sortKey, _id: { $lt: id } }] };
}

/** The page of `docs` read with `limit: size + 1`; `key` is the order's sort key (the cursor's first half). */
export function toPage<D extends { _id: string }>(docs: D[], size: number, key: (d: D) => Date): Page<D> {
  const page = docs.slice(0, size);
  const edges = page.map((d) => ({ cursor: encodeCursor(key(d), d._id), node: d }));
  return { edges, pageInfo: { hasNextPage: docs.length > size, endCursor: edges.at(-1)?.cursor ?? null } };
}


function decodeNameCursor(cursor: string): { name: string; id: string } {
  try {
    const [name, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [unknown, unknown];
    if (typeof name === "string" && typeof id === "string") return { name, id };
  } catch {
    // fall through
  }
  throw new ValidationError("after", "not a cursor returned by this list (use its pageInfo.endCursor)");
}

/** The name a cursor of a list in name order stands at (the list goes on after it); null: from the start. */
export function nameAfter(cursor: string | null | undefined): string | null {
  return cursor ? decodeNameCursor(cursor).name : null;
}

/**
 * The bounds of the names that start with `prefix` (case-sensitive), as a range of an index on the
 * name: from the prefix itself to its successor (its last character's next one), which every name
 * starting with it is below.
 */
export function prefixRange(prefix: string): { $gte: string; $lt: string } {
  const chars = [...prefix];
  const last = chars.pop()!.codePointAt(0)!;
  // The successor of a code point below the surrogates' block is the first one after it (UTF-8 order).
  const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
  return { $gte: prefix, $lt: chars.join("") + String.fromCodePoint(next) };
}

/** The page of `docs` (in the order of a unique name, ascending) read with `limit: size + 1`; `key` gives a document's name. */
export function toNamePage<D extends { _id: string }>(docs: D[], size: number, key: (d: D) => string): Page<D> {
  const page = docs.slice(0, size);
  const edges = page.map((d) => ({ cursor: Buffer.from(JSON.stringify([key(d), d._id])).toString("base64url"), node: d }));
  return { edges, pageInfo: { hasNextPage: docs.length > size, endCursor: edges.at(-1)?.cursor ?? null } };
}

/** Where a cursor of the nodes list (name, then latest start, then id) stands; null: from the start. */
export function nodeAfter(cursor: string | null | undefined): { name: string; startedAt: Date; id: string } | null {
  if (!cursor) return null;
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(v) && v.length === 3) {
      const [name, ms, id] = v as [unknown, unknown, unknown];
      if (typeof name === "string" && typeof ms === "number" && Number.isFinite(ms) && typeof id === "string") return { name, startedAt: new Date(ms), id };
    }
  } catch {
    // fall through
  }
  throw new ValidationError("after", "not a cursor returned by this list (use its pageInfo.endCursor)");
}

/** The page of nodes read with `limit: size + 1`, in (name, startedAt desc, _id) order. */
export function toNodePage<D extends { _id: string; name: string; startedAt: Date }>(docs: D[], size: number): Page<D> {
  const page = docs.slice(0, size);
  const edges = page.map((d) => ({ cursor: Buffer.from(JSON.stringify([d.name, d.startedAt.getTime(), d._id])).toString("base64url"), node: d }));
  return { edges, pageInfo: { hasNextPage: docs.length > size, endCursor: edges.at(-1)?.cursor ?? null } };
}
