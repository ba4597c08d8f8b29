/** Argument checks of the Redis adapters: the shared ones (../checks.ts) and how a time becomes a script argument. */
export { checkCount, checkShard, type LogFn } from "../checks.js";

/** A time as a script argument: a finite number of ms, in the decimal form Redis parses. */
export function ms(name: string, value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`${name} must be a finite number of ms, got ${value}`);
  return String(value);
}
