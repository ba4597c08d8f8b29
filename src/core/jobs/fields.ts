/**
 * Checks of a job's own fields as submitted (the spec is checked in core/spec.ts, the schedule and
 * retry policy by the timing code), and where a new schedule starts. Pure.
 */
import { HIDDEN_CHARACTERS, HIDDEN_CHARACTERS_RULE, unpairedSurrogateProblem, ValidationError } from "../../domain/index.js";
import { nextFire, normalizeSchedule, parsePositiveDuration, type NextFire, type Schedule, type ScheduleInput } from "../../timing/index.js";
import { wrapSchedule } from "../spec.js";

const MAX_CATCHUP_WINDOW_MS = 7 * 24 * 3600 * 1000;
const NAME_RE = new RegExp(`^[^${HIDDEN_CHARACTERS}]{1,128}$`);

export function validateName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "") throw new ValidationError("name", "must not be empty or only spaces: 1–128 characters");
  const unpaired = unpairedSurrogateProblem(trimmed);
  if (unpaired) throw new ValidationError("name", unpaired);
  if (!NAME_RE.test(trimmed)) throw new ValidationError("name", `must be 1–128 characters with ${HIDDEN_CHARACTERS_RULE}`);
  return trimmed;
}

export function validateDescription(d: string | null | undefined): string | null {
  if (d == null || d === "") return null;
  if (d.length > 4_096) throw new ValidationError("description", "at most 4096 characters");
  return d;
}

export function validateTags(tags: string[] | null | undefined): string[] {
  if (!tags) return [];
  if (tags.length > 32) throw new ValidationError("tags", "at most 32 tags");
  for (const t of tags) {
    if (!/^[A-Za-z0-9_.:/=-]{1,64}$/.test(t)) {
      throw new ValidationError("tags", `"${t}" is not a valid tag: 1–64 characters of letters, digits and _ . : / = -`);
    }
  }
  return [...new Set(tags)];
}

/** A run's queue priority is 0 (lowest) to this. */
export const MAX_PRIORITY = 9;

export function validatePriority(p: number | null | undefined): number {
  if (p == null) return 5;
  if (!Number.isInteger(p) || p < 0 || p > MAX_PRIORITY) throw new ValidationError("priority", `must be a whole number from 0 to ${MAX_PRIORITY} (got ${p})`);
  return p;
}

/** The catch-up window in ms (`dflt` when not given); at most seven days. */
export function validateCatchup(raw: string | null | undefined, dflt: number): number {
  if (raw == null) return dflt;
  const ms = wrapSchedule(() => parsePositiveDuration(raw, "catchupWindow"), "job");
  if (ms > MAX_CATCHUP_WINDOW_MS) throw new ValidationError("catchupWindow", "at most P7D");
  return ms;
}

/**
 * The planning cursor of a new schedule: slots after it are still to come. A one-off whose time is
 * already past runs now (it is due), so its cursor sits just before its slot.
 */
export function firstCursor(schedule: Schedule, now: number): number {
  if (schedule.kind === "ONCE" && schedule.atMs !== null && schedule.atMs !== undefined) {
    return Math.min(now, schedule.atMs) - 1;
  }
  return now - 1;
}

/** A new schedule as submitted (createJob, updateJob, previewSchedule), checked, and its planning cursor (BAD_USER_INPUT on `schedule.<field>`). */
export function startSchedule(input: ScheduleInput, now: number): { schedule: Schedule; handledThrough: number } {
  const schedule = wrapSchedule(() => normalizeSchedule(input, now));
  return { schedule, handledThrough: firstCursor(schedule, now) };
}

/** The first fire of a new schedule for the job `jobId` (spread, jitter); BAD_USER_INPUT on `schedule` when it has none to come. */
export function firstFire(schedule: Schedule, jobId: string, handledThrough: number, random: () => number): NextFire {
  const first = nextFire(schedule, jobId, handledThrough, 0, random);
  if (!first) throw new ValidationError("schedule", "has no fire time after now (check at, endAt and maxFires)");
  return first;
}
