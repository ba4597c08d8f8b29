/** Argument checks of both adapters (memory/ and redis/): the same errors from each, one definition. */

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
