/** Argument checks of the Redis adapters; they throw what the in-memory adapters throw. */

export type LogFn = (level: "debug" | "info" | "warn" | "error", msg: string, fields?: Record<string, unknown>) => void;

export function checkShard(shard: number, shardCount: number): void {
  if (!Number.isInteger(shard) || shard < 0 || shard >= shardCount)
    throw new RangeError(`shard must be an integer in [0, ${shardCount}), got ${shard}`);
}

/** A time as a script argument: a finite number of ms, in the decimal form Redis parses. */
export function ms(name: string, value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`${name} must be a finite number of ms, got ${value}`);
  return String(value);
}

export function checkCount(name: string, n: number): void {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative integer, got ${n}`);
}
