/**
 * Readers for one setting each: the value, or a default when it is unset or empty, or a
 * ConfigError that names the setting and says what is allowed.
 */
import { ConfigError, readWholeNumber } from "../domain/index.js";
import { parseDuration, ScheduleError } from "../timing/index.js";

/** The environment (or the environment with the command-line flags applied). */
export type Env = Record<string, string | undefined>;

import type { Rate } from "../auth/index.js";

export type { Rate };

/**
 * A setting's duration: the same ISO-8601 grammar as every duration field of the API
 * (`timing`'s parseDuration: PnW or PnDTnHnMnS, seconds to the millisecond), and positive.
 */
export function settingDuration(name: string, raw: string): number {
  let ms: number;
  try {
    ms = parseDuration(raw, name);
  } catch (err) {
    if (err instanceof ScheduleError) throw new ConfigError(err.message);
    throw err;
  }
  if (ms <= 0) throw new ConfigError(`${name}: duration must be positive (got "${raw}")`);
  return ms;
}

/**
 * A whole number from `min` to `max` in decimal digits (domain's readWholeNumber, the one reader
 * of integer settings): `1e3`, `0x10`, `4000.0` and a blank value are refused, not read as
 * Number() reads them. Unset or empty: `dflt`.
 */
export function int(name: string, raw: string | undefined, dflt: number, min: number, max: number): number {
  if (raw === undefined || raw === "") return dflt;
  const read = readWholeNumber(raw, min, max);
  if ("problem" in read) throw new ConfigError(`${name}: ${read.problem}`);
  return read.value;
}

/** A whole number from `min` to `max` (as `int` reads it), or `off` (null). */
export function intOrOff(name: string, raw: string | undefined, dflt: number | null, min: number, max: number): number | null {
  if (raw === undefined || raw.trim() === "") return dflt;
  if (/^off$/i.test(raw.trim())) return null;
  const read = readWholeNumber(raw, min, max, "off");
  if ("problem" in read) throw new ConfigError(`${name}: ${read.problem}`);
  return read.value;
}

export function bool(name: string, raw: string | undefined, dflt: boolean): boolean {
  if (raw === undefined || raw === "") return dflt;
  if (/^(true|1|on|yes)$/i.test(raw)) return true;
  if (/^(false|0|off|no)$/i.test(raw)) return false;
  throw new ConfigError(`${name}: "${raw}" must be true or false`);
}

/** `N/duration` (e.g. `1200/PT1M`: 1200 per minute) or `off`. */
export function rate(name: string, raw: string | undefined, dflt: string): Rate | null {
  const value = (raw === undefined || raw === "" ? dflt : raw).trim();
  if (/^off$/i.test(value)) return null;
  const m = /^(\d+)\/(P\S+)$/.exec(value);
  const points = m ? Number(m[1]) : NaN;
  if (!m || !Number.isInteger(points) || points < 1 || points > 1_000_000_000) {
    throw new ConfigError(`${name}: "${raw}" must be N/duration with N ≥ 1 (e.g. 1200/PT1M) or off`);
  }
  const durationMs = settingDuration(name, m[2]!);
  if (durationMs < 1000) throw new ConfigError(`${name}: the duration must be at least PT1S (got "${raw}")`);
  return { points, durationMs };
}

/** A URL with one of `schemes` (e.g. `mongodb:`), or null when unset. */
export function url(name: string, raw: string | undefined, schemes: string[]): string | null {
  if (raw === undefined || raw === "") return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name}: "${raw}" is not a URL; expected ${schemes.map((s) => `${s}//host:port`).join(" or ")}`);
  }
  if (!schemes.includes(parsed.protocol)) {
    throw new ConfigError(`${name}: scheme ${parsed.protocol} is not supported; use ${schemes.join(" or ")}`);
  }
  return raw;
}

/**
 * The ports browsers and Node's fetch refuse to connect to, whatever listens there (the Fetch
 * standard's "bad ports"): an API there serves a console no browser opens and a `kairos` that
 * cannot reach it.
 */
const BAD_PORTS = new Set([1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080]);

/** Whether browsers and Node's fetch refuse to connect to `port`, and why, for a message. */
export function badPortReason(port: number): string | null {
  return BAD_PORTS.has(port) ? `port ${port} is one that browsers and Node's fetch refuse to connect to (the Fetch standard's "bad ports")` : null;
}

/**
 * The API's port: a whole number from 0 to 65535. `kairos dev` serves its console and `kairos` on
 * it directly, so there a bad port (badPortReason) is refused; the `api` role may sit behind a
 * proxy that listens elsewhere, so it only warns when it starts (app/roles.ts).
 */
export function apiPort(name: string, raw: string | undefined, dflt: number, refuseBad: boolean): number {
  const port = int(name, raw, dflt, 0, 65_535);
  const bad = badPortReason(port);
  if (bad && refuseBad) throw new ConfigError(`${name}: ${bad}: the console and kairos could not reach the API there; choose another, such as ${dflt}`);
  return port;
}
