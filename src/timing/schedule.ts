/**
 * Schedules: validation into a normalized, JSON-serializable form, and the slot arithmetic the
 * scheduler loop needs (next slot, slots in a window, preview of upcoming fires).
 *
 * Vocabulary: a *slot* is one nominal instant of a schedule; its `at` is the identity of the fire
 * (`fireKey = jobId@at`). A slot's *due time* adds spread and jitter (see `jitter.ts`); the
 * identity never moves.
 *
 * Everything here is pure: `now` is a parameter, never read from a clock.
 */
import { parseCron } from "./cron.js";
import { shortestGap } from "./cron-match.js";
import { cronEvents, type CronEvent, type DstGapPolicy, type DstRepeatPolicy, type DstSkip, type DstTag, type Slot } from "./dst.js";
import { formatDuration, HOUR, humanDuration, parseDuration, parsePositiveDuration, SECOND, type Millis } from "./duration.js";
import { ScheduleError } from "./errors.js";
import { canonicalTimeZone, formatLocal, MAX_INSTANT, MIN_INSTANT } from "./zones.js";

import type { Schedule, ScheduleKind } from "../domain/index.js";
export type { Schedule, ScheduleKind };

/** What a user submits. `null` means the same as absent (GraphQL sends nulls for unset fields). */
export interface ScheduleInput {
  kind: ScheduleKind;
  /** ONCE: the instant to run (epoch ms). In the past means "run now". Exclusive with `delay`. */
  at?: Millis | null;
  /** ONCE: run this long after creation (ISO-8601 duration, `PT0S` allowed). Exclusive with `at`. */
  delay?: string | null;
  /** INTERVAL: elapsed time between fires, ISO-8601, at least `PT1S`. */
  every?: string | null;
  /** CRON: 5 or 6 fields or a macro; see `cron.ts`. */
  cron?: string | null;
  /** IANA zone: CRON evaluates wall-clock time here; other kinds use it for display only. @default 'UTC' */
  timezone?: string | null;
  /** INTERVAL: the anchor, first slot. CRON: no slot before it. @default now */
  startAt?: Millis | null;
  /** INTERVAL/CRON: no slot after it (a slot exactly at endAt still fires). @default none */
  endAt?: Millis | null;
  /** INTERVAL/CRON: the schedule ends after this many runs (FIRED outcomes). @default none */
  maxFires?: number | null;
  /** CRON: nonexistent wall time (spring forward). @default 'SHIFT' */
  dstGap?: DstGapPolicy | null;
  /** CRON: wall time that happens twice (fall back). @default 'FIRST' */
  dstRepeat?: DstRepeatPolicy | null;
  /** Random extra delay in `[0, jitter)`, drawn per fire (ISO-8601). @default 'PT0S' */
  jitter?: string | null;
  /** Deterministic extra delay in `[0, spread)` derived from the job id (ISO-8601). @default 'PT0S' */
  spread?: string | null;
}

/** Jitter and spread are each capped at 1 h: longer delays are a different schedule, not noise. */
export const MAX_JITTER_MS: Millis = HOUR;
/** Shortest INTERVAL. */
export const MIN_EVERY_MS: Millis = SECOND;
/** `nextFires` returns between 1 and this many fires. */
export const MAX_PREVIEW = 100;

const FIELDS_BY_KIND: Record<ScheduleKind, ReadonlyArray<keyof ScheduleInput>> = {
  ONCE: ["at", "delay", "timezone", "jitter", "spread"],
  INTERVAL: ["every", "timezone", "startAt", "endAt", "maxFires", "jitter", "spread"],
  CRON: ["cron", "timezone", "startAt", "endAt", "maxFires", "dstGap", "dstRepeat", "jitter", "spread"],
};
const ALL_FIELDS: ReadonlyArray<keyof ScheduleInput> = [
  "at", "delay", "every", "cron", "timezone", "startAt", "endAt", "maxFires", "dstGap", "dstRepeat", "jitter", "spread",
];

/**
 * Validates a schedule and fills in defaults.
 *
 * - ONCE: `at` or `delay` (not both); neither means now. An `at` in the past is accepted and
 *   becomes `now`: the job runs at once (a one-off scheduled "for 09:00" submitted at 09:00:02
 *   should run, not be refused or dropped as missed).
 * - INTERVAL: `every` ≥ 1 s; slots are `startAt + k·every` for k = 0, 1, …, so with the default
 *   `startAt = now` the first run is immediate.
 * - CRON: the expression must be able to fire at least once between startAt and endAt.
 * - Fields that do not apply to the kind are refused rather than silently ignored.
 *
 * @param now creation time (epoch ms), the default for `startAt` and the base of `delay`.
 * @throws ScheduleError naming the field, what is wrong and what is allowed.
 */
export function normalizeSchedule(input: ScheduleInput, now: Millis): Schedule {
  if (!input || !["ONCE", "INTERVAL", "CRON"].includes(input.kind)) {
    throw new ScheduleError("kind", `must be ONCE, INTERVAL or CRON (got ${JSON.stringify(input?.kind)})`);
  }
  assertInstant(now, "now");
  refuseForeignFields(input);
  const timezone = input.timezone == null ? "UTC" : canonicalTimeZone(input.timezone);
  const jitterMs = input.jitter == null ? 0 : parseDuration(input.jitter, "jitter");
  const spreadMs = input.spread == null ? 0 : parseDuration(input.spread, "spread");
  for (const [field, ms, text] of [["spread", spreadMs, input.spread], ["jitter", jitterMs, input.jitter]] as const) {
    if (ms > MAX_JITTER_MS) throw new ScheduleError(field, `at most 1 hour (PT1H), got "${text}"`);
  }
  const base = { timezone, jitterMs, spreadMs, endAt: null, maxFires: null, dstGap: "SHIFT", dstRepeat: "FIRST" } as const;
  let schedule: Schedule;
  switch (input.kind) {
    case "ONCE":
      schedule = { ...base, kind: "ONCE", ...onceInstant(input, now), everyMs: null, every: null, cron: null, maxFires: 1 };
      break;
    case "INTERVAL":
      schedule = { ...base, kind: "INTERVAL", atMs: null, ...intervalFields(input), cron: null, ...bounds(input, now) };
      break;
    case "CRON":
      schedule = {
        ...base,
        kind: "CRON",
        atMs: null,
        everyMs: null,
        every: null,
        cron: cronText(input),
        ...bounds(input, now),
        dstGap: oneOf(input.dstGap, "dstGap", ["SHIFT", "SKIP"], "SHIFT"),
        dstRepeat: oneOf(input.dstRepeat, "dstRepeat", ["FIRST", "LAST", "BOTH"], "FIRST"),
      };
      assertCronFires(schedule);
      break;
  }
  assertDelaysFit(schedule, input);
  return schedule;
}

function refuseForeignFields(input: ScheduleInput): void {
  const allowed = FIELDS_BY_KIND[input.kind];
  for (const f of ALL_FIELDS) {
    if (input[f] != null && !allowed.includes(f)) {
      const hint =
        f === "dstGap" || f === "dstRepeat"
          ? "; INTERVAL and ONCE count elapsed time and never see daylight saving"
          : "";
      throw new ScheduleError(f, `does not apply to ${input.kind} schedules (allowed: ${allowed.join(", ")})${hint}`);
    }
  }
}

function onceInstant(input: ScheduleInput, now: Millis): { atMs: Millis; startAt: Millis } {
  if (input.at != null && input.delay != null) throw new ScheduleError("at", `give either at or delay, not both`);
  let at = now;
  if (input.at != null) at = assertInstant(input.at, "at");
  else if (input.delay != null) at = now + parseDuration(input.delay, "delay");
  // Past (or now) means "run now"; the slot identity is then the creation instant.
  const atMs = Math.min(Math.max(at, now), MAX_INSTANT);
  return { atMs, startAt: atMs };
}

function intervalFields(input: ScheduleInput): { everyMs: Millis; every: string } {
  if (input.every == null) throw new ScheduleError("every", `required for INTERVAL schedules, e.g. "PT30S" or "PT1H"`);
  const everyMs = parsePositiveDuration(input.every, "every");
  if (everyMs < MIN_EVERY_MS) throw new ScheduleError("every", `must be at least 1 s (PT1S), got "${input.every}"`);
  return { everyMs, every: input.every.trim().toUpperCase() };
}

function cronText(input: ScheduleInput): string {
  if (input.cron == null) throw new ScheduleError("cron", `required for CRON schedules, e.g. "*/5 * * * *" or "@daily"`);
  return parseCron(input.cron).text;
}

function bounds(input: ScheduleInput, now: Millis): { startAt: Millis; endAt: Millis | null; maxFires: number | null } {
  const startAt = input.startAt == null ? now : assertInstant(input.startAt, "startAt");
  const endAt = input.endAt == null ? null : assertInstant(input.endAt, "endAt");
  if (endAt !== null && endAt <= startAt) {
    throw new ScheduleError("endAt", `must be after startAt (endAt ${iso(endAt)}, startAt ${iso(startAt)})`);
  }
  let maxFires: number | null = null;
  if (input.maxFires != null) {
    if (!Number.isSafeInteger(input.maxFires) || input.maxFires < 1) {
      throw new ScheduleError("maxFires", `must be a whole number ≥ 1, or absent for no limit (got ${input.maxFires})`);
    }
    maxFires = input.maxFires;
  }
  return { startAt, endAt, maxFires };
}

function oneOf<T extends string>(v: T | null | undefined, field: string, allowed: readonly T[], dflt: T): T {
  if (v == null) return dflt;
  if (!allowed.includes(v)) throw new ScheduleError(field, `must be one of ${allowed.join(", ")} (got ${JSON.stringify(v)})`);
  return v;
}

function assertInstant(v: unknown, field: string): Millis {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < MIN_INSTANT || v > MAX_INSTANT) {
    throw new ScheduleError(field, `must be an instant in epoch milliseconds between 1970-01-01 and 9999-12-31 (got ${String(v)})`);
  }
  return v;
}

function assertCronFires(s: Schedule): void {
  if (nextSlot(s, s.startAt - 1, 0) === null) {
    throw new ScheduleError(
      "endAt",
      `"${s.cron}" in ${s.timezone} has no fire between startAt ${iso(s.startAt)} and endAt ${iso(s.endAt ?? MAX_INSTANT)}; move endAt later or change the expression`,
    );
  }
}

/**
 * Jitter plus spread must fit before the next slot, so a delayed fire never overtakes the one
 * after it (the runs of one job then start in slot order).
 */
function assertDelaysFit(s: Schedule, input: ScheduleInput): void {
  const total = s.jitterMs + s.spreadMs;
  if (total === 0 || s.kind === "ONCE") return;
  const gap = s.kind === "INTERVAL" ? s.everyMs! : shortestGap(parseCron(s.cron!), s.startAt);
  if (total > gap) {
    const field = input.jitter != null ? "jitter" : "spread";
    const what = s.kind === "INTERVAL" ? `the interval (every ${s.every})` : `the shortest gap between fires of "${s.cron}" (${formatDuration(gap)})`;
    throw new ScheduleError(field, `jitter + spread (${formatDuration(total)}) must not exceed ${what}, so a delayed fire never passes the next one`);
  }
}

function iso(ms: Millis): string {
  return new Date(ms).toISOString();
}

/** Every slot and DST skip with `after < at ≤ until`, increasing, ignoring maxFires. */
function* scheduleEvents(s: Schedule, after: Millis, until: Millis): Generator<CronEvent> {
  const lo = Math.max(after, s.startAt - 1);
  const hi = Math.min(until, s.endAt ?? MAX_INSTANT, MAX_INSTANT);
  if (hi <= lo) return;
  switch (s.kind) {
    case "ONCE":
      if (s.atMs! > lo && s.atMs! <= hi) yield { kind: "slot", slot: { at: s.atMs! } };
      return;
    case "INTERVAL": {
      // Slots are computed from the anchor, never from the previous slot, so they cannot drift.
      const every = s.everyMs!;
      for (let k = Math.floor((lo - s.startAt) / every) + 1; ; k++) {
        const at = s.startAt + k * every;
        if (at > hi) return;
        yield { kind: "slot", slot: { at } };
      }
    }
    case "CRON":
      yield* cronEvents(parseCron(s.cron!), s.timezone, { gap: s.dstGap, repeat: s.dstRepeat }, lo, hi);
      return;
  }
}

function remaining(s: Schedule, firedCount: number): number {
  return s.maxFires === null ? Infinity : Math.max(0, s.maxFires - firedCount);
}

/**
 * The first slot strictly after `after`, or null when the schedule has ended (past endAt, or
 * `firedCount` has reached maxFires, or a ONCE slot already passed).
 * @param firedCount runs created so far (FIRED outcomes); only maxFires reads it.
 */
export function nextSlot(s: Schedule, after: Millis, firedCount: number): Slot | null {
  if (remaining(s, firedCount) === 0) return null;
  for (const e of scheduleEvents(s, after, MAX_INSTANT)) if (e.kind === "slot") return e.slot;
  return null;
}

/**
 * The first slot at or after `now`: use it to arm a newly created or resumed job.
 * (`nextSlot(s, now - 1, firedCount)`.)
 */
export function firstSlot(s: Schedule, now: Millis, firedCount = 0): Slot | null {
  return nextSlot(s, now - 1, firedCount);
}

/**
 * Slots with `fromExclusive < at ≤ toInclusive`, increasing, at most `limit` of them and at most
 * as many as maxFires still allows. `truncated` is true when more slots exist in the range than
 * `limit` allowed (not when the schedule simply ended).
 */
export function slotsBetween(
  s: Schedule,
  fromExclusive: Millis,
  toInclusive: Millis,
  limit: number,
  firedCount: number,
): { slots: Slot[]; truncated: boolean } {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`slotsBetween: limit must be a whole number ≥ 0, got ${limit}`);
  const cap = Math.min(limit, remaining(s, firedCount));
  const slots: Slot[] = [];
  for (const e of scheduleEvents(s, fromExclusive, toInclusive)) {
    if (e.kind !== "slot") continue;
    if (slots.length === cap) return { slots, truncated: cap === limit };
    slots.push(e.slot);
  }
  return { slots, truncated: false };
}

/**
 * Wall times that a `dstGap: 'SKIP'` cron did not run in `(fromExclusive, toInclusive]`, one
 * record per gap, for the ledger (outcome SKIPPED_DST). Empty for other schedules.
 */
export function dstSkipsBetween(s: Schedule, fromExclusive: Millis, toInclusive: Millis): DstSkip[] {
  if (s.kind !== "CRON" || s.dstGap !== "SKIP") return [];
  const out: DstSkip[] = [];
  for (const e of scheduleEvents(s, fromExclusive, toInclusive)) if (e.kind === "skip") out.push(e.skip);
  return out;
}

/** One upcoming fire for display (`job.nextFires(count)`). */
export interface FirePreview {
  at: Millis;
  /** ISO-8601 in UTC, e.g. `2026-03-29T01:00:00.000Z`. */
  utc: string;
  /** ISO-8601 with the schedule zone's offset, e.g. `2026-03-29T03:00:00+02:00`. */
  local: string;
  dst?: DstTag;
  /** For GAP_SHIFTED: the nonexistent wall time this fire stands for. */
  nominal?: string;
}

/**
 * The next `count` fires after `after` (1–{@link MAX_PREVIEW}), with UTC and local renderings.
 * @throws ScheduleError when count is not a whole number in 1–100.
 */
export function nextFires(s: Schedule, after: Millis, count: number, firedCount = 0): FirePreview[] {
  if (!Number.isSafeInteger(count) || count < 1 || count > MAX_PREVIEW) {
    throw new ScheduleError("count", `must be a whole number from 1 to ${MAX_PREVIEW} (got ${count})`);
  }
  return slotsBetween(s, after, MAX_INSTANT, count, firedCount).slots.map((slot) => ({
    at: slot.at,
    utc: iso(slot.at),
    local: formatLocal(s.timezone, slot.at),
    ...(slot.dst ? { dst: slot.dst } : {}),
    ...(slot.nominal ? { nominal: slot.nominal } : {}),
  }));
}

/**
 * One line for logs: `every 2 s`, `cron *\/5 * * * * in Europe/Berlin`,
 * `once at 2026-03-08T07:00:00.000Z`, with bounds, limits, DST choices and delays when set, and a
 * recurring job's next fire when rescheduleJob moved it (`rescheduledTo`, until that fire).
 */
export function describeSchedule(s: Schedule, rescheduledTo: Millis | null = null): string {
  const parts: string[] = [];
  if (s.kind === "ONCE") parts.push(`once at ${iso(s.atMs!)}${s.timezone === "UTC" ? "" : ` (${formatLocal(s.timezone, s.atMs!)} ${s.timezone})`}`);
  if (s.kind === "INTERVAL") parts.push(`every ${humanDuration(s.everyMs!)} from ${iso(s.startAt)}`);
  if (s.kind === "CRON") {
    parts.push(`cron ${s.cron} in ${s.timezone}`);
    if (s.dstGap !== "SHIFT" || s.dstRepeat !== "FIRST") parts.push(`DST gap ${s.dstGap}, repeat ${s.dstRepeat}`);
  }
  if (s.endAt !== null) parts.push(`until ${iso(s.endAt)}`);
  if (s.maxFires !== null && s.kind !== "ONCE") parts.push(`at most ${s.maxFires} run${s.maxFires === 1 ? "" : "s"}`);
  if (s.spreadMs) parts.push(`spread ${humanDuration(s.spreadMs)}`);
  if (s.jitterMs) parts.push(`jitter ${humanDuration(s.jitterMs)}`);
  const described = parts.join(", ");
  if (rescheduledTo === null || s.kind === "ONCE") return described;
  return `${described}; next fire rescheduled to ${iso(rescheduledTo)}, then as scheduled`;
}
