/** The pure parts of the job service (core/jobs/): field checks, a new schedule's cursor, backfill slots, coming fires. */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/domain/errors.js";
import { backfillSlots, comingFires, MAX_BACKFILL } from "../../src/core/jobs/index.js";
import {
  firstCursor,
  validateCatchup,
  validateDescription,
  validateName,
  validatePriority,
  validateTags,
} from "../../src/core/jobs/fields.js";
import { normalizeSchedule } from "../../src/timing/index.js";

const T0 = Date.UTC(2030, 0, 1, 0, 0, 0);
const MIN = 60_000;

function refused(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return e as ValidationError;
  }
  throw new Error("not refused");
}

describe("job fields", () => {
  it("trims names and refuses empty, long or control-character ones", () => {
    expect(validateName("  nightly  ")).toBe("nightly");
    expect(refused(() => validateName("   ")).field).toBe("name");
    expect(refused(() => validateName("x".repeat(129))).field).toBe("name");
    expect(refused(() => validateName("a\nb")).field).toBe("name");
  });

  it("keeps a description up to 4096 characters; empty is none", () => {
    expect(validateDescription(undefined)).toBeNull();
    expect(validateDescription("")).toBeNull();
    expect(validateDescription("d")).toBe("d");
    expect(refused(() => validateDescription("x".repeat(4_097))).field).toBe("description");
  });

  it("deduplicates tags and refuses bad or too many", () => {
    expect(validateTags(null)).toEqual([]);
    expect(validateTags(["a", "b:c", "a"])).toEqual(["a", "b:c"]);
    expect(refused(() => validateTags(["has space"])).message).toContain('"has space" is not a valid tag');
    expect(refused(() => validateTags(Array.from({ length: 33 }, (_, i) => `t${i}`))).field).toBe("tags");
  });

  it("defaults the priority to 5 and takes whole numbers 0–9", () => {
    expect(validatePriority(undefined)).toBe(5);
    expect(validatePriority(0)).toBe(0);
    expect(validatePriority(9)).toBe(9);
    for (const bad of [-1, 10, 1.5]) expect(refused(() => validatePriority(bad)).field).toBe("priority");
  });

  it("reads the catch-up window as a duration of at most seven days", () => {
    expect(validateCatchup(null, 123)).toBe(123);
    expect(validateCatchup("PT1H", 0)).toBe(3_600_000);
    expect(refused(() => validateCatchup("P8D", 0)).field).toBe("catchupWindow");
    expect(refused(() => validateCatchup("soon", 0)).field).toBe("job.catchupWindow");
  });
});

describe("firstCursor", () => {
  it("starts a schedule just before now, or just before a one-off that is already due", () => {
    const every = normalizeSchedule({ kind: "INTERVAL", every: "PT1M" }, T0);
    expect(firstCursor(every, T0)).toBe(T0 - 1);
    const future = normalizeSchedule({ kind: "ONCE", at: T0 + MIN }, T0);
    expect(firstCursor(future, T0)).toBe(T0 - 1);
    // As stored by an earlier now (normalizeSchedule moves a past `at` to now).
    expect(firstCursor({ ...future, atMs: T0 - MIN }, T0)).toBe(T0 - MIN - 1);
  });
});

describe("backfillSlots", () => {
  const every = normalizeSchedule({ kind: "INTERVAL", every: "PT1M", startAt: T0 }, T0);
  const now = T0 + 60 * MIN;

  it("gives the slots of a past range, both ends included", () => {
    expect(backfillSlots(every, T0 + MIN, T0 + 3 * MIN, now).map((s) => s.at)).toEqual([T0 + MIN, T0 + 2 * MIN, T0 + 3 * MIN]);
  });

  it("refuses reversed, future, empty and oversized ranges", () => {
    expect(refused(() => backfillSlots(every, T0 + 2 * MIN, T0 + MIN, now)).field).toBe("to");
    expect(refused(() => backfillSlots(every, T0, now + 1, now)).message).toContain("is in the future");
    const before = refused(() => backfillSlots(every, T0 - 10 * MIN, T0 - MIN, now));
    expect(before.message).toContain("holds no slot of the schedule");
    // Says why (the range is before startAt, which defaults to creation) and what to do about it.
    expect(before.message).toContain(`it ends before the schedule's startAt, ${new Date(T0).toISOString()}`);
    expect(before.message).toMatch(/give the schedule an earlier startAt first \(updateJob or updateDag\)$/);
    const hourly = normalizeSchedule({ kind: "INTERVAL", every: "PT1H", startAt: T0 }, T0);
    const between = refused(() => backfillSlots(hourly, T0 + MIN, T0 + 2 * MIN, now));
    expect(between.message).toContain("holds no slot of the schedule");
    expect(between.message).not.toContain("earlier startAt");
    const seconds = normalizeSchedule({ kind: "INTERVAL", every: "PT1S", startAt: T0 }, T0);
    expect(refused(() => backfillSlots(seconds, T0, T0 + (MAX_BACKFILL + 1) * 1000, T0 + 3_600_000)).message).toContain(`more than ${MAX_BACKFILL} slots`);
  });
});

describe("comingFires", () => {
  const every = normalizeSchedule({ kind: "INTERVAL", every: "PT1M", startAt: T0 }, T0);
  const job = { schedule: every, status: "ACTIVE" as const, handledThrough: new Date(T0 + 5 * MIN), firedCount: 5 };

  it("lists fires with a staged run first, then the schedule after the cursor", () => {
    const staged = [{ scheduledFor: new Date(T0 + 5 * MIN) }];
    const fires = comingFires(job, staged, 3, T0 + 5 * MIN - 1);
    expect(fires.map((f) => f.at.getTime())).toEqual([T0 + 5 * MIN, T0 + 6 * MIN, T0 + 7 * MIN]);
    expect(fires[0]).toMatchObject({ local: expect.any(String), dst: null });
  });

  it("continues from now when the cursor is behind, and only from staged runs once COMPLETED", () => {
    expect(comingFires(job, [], 2, T0 + 10 * MIN + 1).map((f) => f.at.getTime())).toEqual([T0 + 11 * MIN, T0 + 12 * MIN]);
    const done = { ...job, status: "COMPLETED" as const };
    expect(comingFires(done, [], 5, T0)).toEqual([]);
    expect(comingFires(done, [{ scheduledFor: new Date(T0 + 6 * MIN) }], 5, T0).map((f) => f.at.getTime())).toEqual([T0 + 6 * MIN]);
  });
});
