/**
 * Server-side cursors. A cursor holds the remaining result documents (references to immutable
 * stored versions, so later writes cannot tear a batch) and hands them out in batches.
 */
import { BSON, Long } from "bson";
import type { Doc } from "./values.js";

/** MongoDB's default idle timeout for cursors without noCursorTimeout. */
export const CURSOR_IDLE_MS = 10 * 60 * 1000;
/** Batches stop short of the 16 MiB reply limit, leaving room for the reply envelope. */
const BATCH_BYTES = 16 * 1024 * 1024 - 64 * 1024;
/** Default size of a first batch, as MongoDB's. */
export const DEFAULT_FIRST_BATCH = 101;

export interface Cursor {
  readonly id: Long;
  readonly ns: string;
  readonly items: Doc[];
  pos: number;
  readonly project: ((d: Doc) => Doc) | null;
  lastUsed: number;
  readonly noTimeout: boolean;
}

/**
 * Takes up to `batchSize` documents (0 = as many as fit) from `pos`. A batch always contains at
 * least one document when any remain, even an oversize one, so a cursor always progresses.
 */
export function takeBatch(items: Doc[], pos: number, batchSize: number, project: ((d: Doc) => Doc) | null): { batch: Doc[]; pos: number } {
  const batch: Doc[] = [];
  let bytes = 0;
  const max = batchSize > 0 ? batchSize : Infinity;
  while (pos < items.length && batch.length < max) {
    const doc = project ? project(items[pos]) : items[pos];
    // A lone document always fits (it is at most 16 MiB); sizes matter only once a batch grows.
    if (batch.length > 0 || (max > 1 && items.length - pos > 1)) {
      bytes += BSON.calculateObjectSize(doc);
      if (bytes > BATCH_BYTES && batch.length > 0) break;
    }
    batch.push(doc);
    pos++;
  }
  return { batch, pos };
}

export class CursorRegistry {
  private readonly open = new Map<string, Cursor>();
  // Start from a random point so ids from a previous run are not mistaken for live cursors.
  private next = BigInt(Math.floor(Math.random() * 2 ** 40)) + 1n;

  get size(): number {
    return this.open.size;
  }

  create(ns: string, items: Doc[], pos: number, project: ((d: Doc) => Doc) | null, noTimeout = false): Cursor {
    const id = Long.fromBigInt(this.next++);
    const cursor: Cursor = { id, ns, items, pos, project, lastUsed: Date.now(), noTimeout };
    this.open.set(id.toString(), cursor);
    return cursor;
  }

  get(id: unknown): Cursor | undefined {
    return this.open.get(String(id));
  }

  kill(id: unknown): boolean {
    return this.open.delete(String(id));
  }

  killNamespace(ns: string): void {
    for (const [key, c] of this.open) if (c.ns === ns) this.open.delete(key);
  }

  sweep(nowMs: number): void {
    for (const [key, c] of this.open) if (!c.noTimeout && nowMs - c.lastUsed > CURSOR_IDLE_MS) this.open.delete(key);
  }
}
