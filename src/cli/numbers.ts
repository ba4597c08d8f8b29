/**
 * Numbers given as flags (`--limit 20`, `--from 1024`), read as the server's settings are: decimal
 * digits only (domain's readWholeNumber). Number() took `--limit 0x10` as 16 and `--from 1e3` as
 * byte 1000, and a blank value as 0.
 */
import { readDecimal, readWholeNumber } from "../domain/index.js";
import { CliError } from "./errors.js";

/** `text` as a whole number from `min` to `max`, or a CliError naming `flag`: `--limit: "0x10" must be a whole number from 1 to 100: it is hexadecimal (write 16); …`. */
export function wholeNumberFlag(flag: string, text: string, min: number, max: number): number {
  const read = readWholeNumber(text, min, max);
  if ("problem" in read) throw new CliError(`${flag}: ${read.problem}`);
  return read.value;
}

/**
 * A number flag whose range the API checks (its refusal names the flag: flag-names.ts), read here
 * as settings are: `--factor 1e1` and `--min-runs 0x10` are refused, not read as 10 and 16.
 */
export function decimalFlag(flag: string, text: string | undefined, whole: boolean): number | undefined {
  if (text === undefined) return undefined;
  const read = readDecimal(text, whole);
  if ("problem" in read) throw new CliError(`${flag}: "${text}" must be ${whole ? "a whole number" : "a number"}: it ${read.problem}`);
  return read.value;
}
