/** Argument checks of both adapters (memory/ and redis/): the same errors from each, one definition. */
import { interpreterOfQueue, poolOfQueue, SCRIPT_INTERPRETERS } from "../domain/index.js";

/** How an adapter logs (the app passes its logger in; tests a silent one). */

export type LogFn = (level: "debug" | "info" | "warn" | "error", msg: string, fields?: Record<string, unknown>) => void;

export function checkShard(shard: number, shardCount: number): void {
  if (!Number.isInteger(shard) || shard < 0 || shard >= shardCount)
    throw new RangeError(`shard must be an integer in [0, ${shardCount}), got ${shard}`);
}

export function checkTime(name: string, ms: number): void {
  if (!Number.isFinite(ms)) throw new RangeError(`${name} must be a finite number of ms, got ${ms}`);
}

export function checkCount(name: string, n: number): void {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative integer, got ${n}`);
}

/**
 * The interpreters a pool's entries may need, in the order the adapters keep them: "" (none: a
 * plain run, in the pool's own queue), then the script interpreters (domain SCRIPT_INTERPRETERS).
 */
export const READY_INTERPRETERS: readonly string[] = ["", ...SCRIPT_INTERPRETERS];

/**
 * A ready queue's pool and the interpreter its runs need: `<pool>` → ("<pool>", ""),
 * `<pool>:<interpreter>` → ("<pool>", interpreter). RangeError for an empty pool or an interpreter
 * Kairos does not know (its runs could never be taken).
 */
export function readyQueueParts(queue: string): { pool: string; interpreter: string } {
  const pool = poolOfQueue(queue);
  const interpreter = interpreterOfQueue(queue);
  if (pool === "" || !READY_INTERPRETERS.includes(interpreter)) throw new RangeError(`not a ready queue: ${JSON.stringify(queue)}`);
  return { pool, interpreter };
}

/** A take's pool (not a script queue's name) and the interpreters it may take, "" first, known ones only, no repeats. */
export function takeParts(pool: string, interpreters: readonly string[] | undefined): string[] {
  if (pool === "" || pool.includes(":")) throw new RangeError(`take names a pool, not a queue: ${JSON.stringify(pool)}`);
  const has = new Set(interpreters ?? []);
  return READY_INTERPRETERS.filter((i) => i === "" || has.has(i));
}
