import { ValidationError } from "../domain/errors.js";

export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;

/** Cursor = base64url of `[sortKeyMs, id]`: stable under inserts, opaque to clients. */
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

export function pageSize(first: number | null | undefined): number {
  if (first == null) return DEFAULT_PAGE;
  if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE) {
    throw new ValidationError("first", `must be from 1 to ${MAX_PAGE} (got ${first})`);
  }
  return first;
}

/** Mongo filter for "after this cursor" in a `{key: -1, _id: -1}` (newest first) order. */
export function afterDesc(key: string, cursor: string | null | undefined): Record<string, unknown> {
  if (!cursor) return {};
  const { sortKey, id } = decodeCursor(cursor);
  return { $or: [{ [key]: { $lt: sortKey } }, { [key]: sortKey, _id: { $lt: id } }] };
}

export function connection<D extends { _id: string }, N>(
  docs: D[],
  size: number,
  key: (d: D) => Date,
  map: (d: D) => N,
): { edges: Array<{ cursor: string; node: N }>; pageInfo: { hasNextPage: boolean; endCursor: string | null } } {
  const page = docs.slice(0, size);
  const edges = page.map((d) => ({ cursor: encodeCursor(key(d), d._id), node: map(d) }));
  return { edges, pageInfo: { hasNextPage: docs.length > size, endCursor: edges.at(-1)?.cursor ?? null } };
}
