/**
 * The pure parts of SCHEDULE_SILENT: the rule's checks (validate.ts), the firing that reports a
 * silence once (its id names the schedule and the instant the silence began), the rule's target
 * (one schedule, or each recurring one of its owner: which it covers), and the `s:` timer id read back.
 */
import { describe, expect, it } from "vitest";
import { silenceFiring } from "../../src/core/alerts/match.js";
import { coversSchedule, silenceScope, silenceTarget } from "../../src/core/alerts/silence-scope.js";
import { checkAlertRule, checkSilentSchedule } from "../../src/core/alerts/validate.js";
import { parseTimerId, silenceTimerId, type AlertRuleDoc, type Schedule } from "../../src/domain/index.js";

const NOW = Date.parse("2026-11-28T06:00:00Z");
const rule = (over: Partial<AlertRuleDoc> = {}): AlertRuleDoc => ({
  _id: "r1", ownerId: "u1", name: "r", on: ["SCHEDULE_SILENT"], jobId: "j1", dagId: null, cluster: false, webhook: { url: "https://x.example", slack: false },
  mutedUntil: null, failureRate: null, queueLatenessMs: null, deadlineMs: null, silentForMs: 3600_000, createdAt: new Date(NOW - 86400_000), updatedAt: new Date(NOW - 86400_000), lastDeliveryAt: null, ...over,
});
const input = (over: Record<string, unknown> = {}) => ({ name: "quiet", on: ["SCHEDULE_SILENT"], jobId: "j1", silentFor: "PT1H", webhook: { url: "https://x.example" }, ...over });
const schedule = (over: Partial<Schedule>): Schedule => ({ kind: "INTERVAL", atMs: null, everyMs: 600_000, every: "PT10M", cron: null, timezone: "UTC", startAt: 0, endAt: null, maxFires: null, dstGap: "SHIFT", dstRepeat: "FIRST", jitterMs: 0, ...over }) as Schedule;

describe("SCHEDULE_SILENT rules", () => {
  it("take silentFor from PT1S to P366D, on one job or DAG, or all of the owner's", () => {
    expect(checkAlertRule(input(), false).silentForMs).toBe(3600_000);
    expect(checkAlertRule(input({ silentFor: "P366D" }), false).silentForMs).toBe(366 * 86400_000);
    expect(() => checkAlertRule(input({ silentFor: "P367D" }), false)).toThrow(/silentFor: must be from PT1S to P366D \(got P367D\)/);
    expect(() => checkAlertRule(input({ silentFor: "PT0.5S" }), false)).toThrow(/silentFor: must be at least PT1S/);
    expect(() => checkAlertRule(input({ silentFor: null }), false)).toThrow(/silentFor: a rule on SCHEDULE_SILENT needs silentFor/);
    // Neither jobId nor dagId: every recurring schedule of the rule's owner; never every user's.
    expect(checkAlertRule(input({ jobId: null }), false)).toMatchObject({ jobId: null, dagId: null, cluster: false, silentForMs: 3600_000 });
    expect(() => checkAlertRule(input({ jobId: null, cluster: true }), true)).toThrow(/cluster: a rule on SCHEDULE_SILENT watches its owner's schedules, not every user's .*leave cluster out/);
    expect(() => checkAlertRule(input({ jobId: null, cluster: true, on: ["NODE_LOST", "SCHEDULE_SILENT"] }), true)).toThrow(/cluster: a rule on SCHEDULE_SILENT/);
    expect(() => checkAlertRule(input({ on: ["RUN_FAILED"] }), false)).toThrow(/silentFor: is only for a rule on SCHEDULE_SILENT/);
    expect(checkAlertRule(input({ jobId: null, dagId: "d1" }), false)).toMatchObject({ dagId: "d1", silentForMs: 3600_000 });
  });

  it("watch a recurring schedule, for at least an interval's period or a cron's longest gap", () => {
    const ok = (s: Schedule | null, silentForMs = 3600_000, silentFor = "PT1H") => () => checkSilentSchedule(silentForMs, silentFor, { field: "jobId", id: "j1", schedule: s, dagTimer: false }, NOW);
    const cron = (expr: string, timezone = "UTC", over: Partial<Schedule> = {}) => schedule({ kind: "CRON", everyMs: null, every: null, cron: expr, timezone, ...over });
    expect(ok(schedule({}))).not.toThrow();
    expect(ok(cron("0 * * * *"))).not.toThrow();
    expect(ok(schedule({ kind: "ONCE", everyMs: null, every: null, atMs: 1 }))).toThrow(/jobId: job j1 has a ONCE schedule: SCHEDULE_SILENT watches a recurring one \(INTERVAL or CRON\)/);
    expect(ok(schedule({ everyMs: 7200_000, every: "PT2H" }))).toThrow(/silentFor: PT1H is shorter than the schedule's period \(PT2H\): it would fire between two runs with nothing wrong; give at least PT2H/);
    expect(ok(schedule({ everyMs: 3600_000, every: "PT1H" }))).not.toThrow();
    expect(() => checkSilentSchedule(3600_000, "PT1H", { field: "dagId", id: "d1", schedule: null, dagTimer: false }, NOW)).toThrow(/dagId: DAG d1 has no schedule/);
    expect(() => checkSilentSchedule(3600_000, "PT1H", { field: "jobId", id: "d1", schedule: schedule({}), dagTimer: true }, NOW)).toThrow(/jobId: d1 is a DAG's schedule: give dagId: "d1" instead/);
    // A cron is held to its longest gap, as an INTERVAL to its period: a daily one to a day.
    expect(ok(cron("0 3 * * *"))).toThrow(
      'silentFor: PT1H is shorter than the longest gap between fires of "0 3 * * *" in UTC over the next year (P1D, from 2026-11-29T03:00:00+00:00 to 2026-11-30T03:00:00+00:00): it would fire between two runs with nothing wrong; give at least P1D',
    );
    expect(ok(cron("0 3 * * *"), 86_400_000, "P1D")).not.toThrow();
    // Weekdays only: three days over the weekend (NOW is a Saturday: the next gap is from Friday 4 December).
    expect(ok(cron("0 3 * * 1-5"), 86_400_000, "P1D")).toThrow(/silentFor: P1D is shorter than the longest gap between fires of "0 3 \* \* 1-5" in UTC over the next year \(P3D, from 2026-12-04T03:00:00\+00:00 to 2026-12-07T03:00:00\+00:00\).*give at least P3D$/);
    expect(ok(cron("0 3 * * 1-5"), 3 * 86_400_000, "P3D")).not.toThrow();
    // In a DST zone the weekend that holds the autumn change is an hour longer.
    expect(ok(cron("0 3 * * 1-5", "Europe/Berlin"), 3 * 86_400_000, "P3D")).toThrow(/\(P3DT1H, from 2027-10-29T03:00:00\+02:00 to 2027-11-01T03:00:00\+01:00\).*give at least P3DT1H$/);
    // A cron that goes longer than silentFor may be: it cannot be watched.
    expect(ok(cron("0 0 29 2 *"), 366 * 86_400_000, "P366D")).toThrow(/^jobId: job j1 can go P1461D without a fire \(the longest gap between fires of "0 0 29 2 \*" in UTC .*\), longer than silentFor may be \(P366D\): SCHEDULE_SILENT cannot watch it$/);
    expect(ok(schedule({ everyMs: 400 * 86_400_000, every: "P400D" }), 366 * 86_400_000, "P366D")).toThrow(/^jobId: job j1 can go P400D without a fire \(the schedule's period \(P400D\)\), longer than silentFor may be/);
  });

  it("report a silence once: the firing's id is the rule, the schedule and when the silence began", () => {
    const since = new Date(NOW - 2 * 3600_000);
    const f = silenceFiring(rule(), { jobId: "j1", name: "nightly", dag: false, since, paused: true }, NOW);
    expect(f).toMatchObject({ _id: "r1|silent:j1@" + since.getTime(), event: "SCHEDULE_SILENT", jobId: "j1", jobName: "nightly", at: new Date(since.getTime() + 3600_000) });
    expect(f.detail).toBe(`nightly has had no successful run for 3600 s (since ${since.toISOString()}); it is paused`);
    // The same silence seen again is the same firing (a duplicate insert); the next one is another.
    expect(silenceFiring(rule(), { jobId: "j1", name: "nightly", dag: false, since, paused: false }, NOW + 5_000)._id).toBe(f._id);
    expect(silenceFiring(rule(), { jobId: "j1", name: "nightly", dag: false, since: new Date(NOW), paused: false }, NOW)._id).not.toBe(f._id);
    expect(silenceFiring(rule({ jobId: null, dagId: "d1" }), { jobId: "d1", name: "etl", dag: true, since, paused: false }, NOW).detail).toMatch(/^DAG etl has had/);
  });

  it("name their target and timer", () => {
    expect(silenceTarget(rule())).toEqual({ id: "j1", dag: false });
    expect(silenceScope(rule({ jobId: null }))).toEqual({ all: true });
    expect(silenceTarget(rule({ jobId: null }))).toBeNull();
    expect(silenceScope(rule({ jobId: null, cluster: true }))).toBeNull();
    expect(silenceTarget(rule({ jobId: null, dagId: "d1" }))).toEqual({ id: "d1", dag: true });
    expect(silenceTarget(rule({ on: ["RUN_FAILED"] }))).toBeNull();
    expect(silenceTarget(rule({ silentForMs: undefined }))).toBeNull();
    expect(parseTimerId(silenceTimerId("r1", "j1"))).toEqual({ kind: "silence", ruleId: "r1", jobId: "j1" });
    expect(parseTimerId("d:r1:j1@5")).toEqual({ kind: "deadline", ruleId: "r1", fireKey: "j1@5" });
  });

  it("on all of the owner's schedules, cover the owner's recurring ones only", () => {
    const all = rule({ jobId: null });
    const covers = (s: Schedule | null, over: { ownerId?: string; ended?: boolean } = {}, r = all) => coversSchedule(r, { ownerId: "u1", ended: false, schedule: s, ...over }, NOW);
    const cron = (expr: string, timezone = "UTC", over: Partial<Schedule> = {}) => schedule({ kind: "CRON", everyMs: null, every: null, cron: expr, timezone, ...over });
    expect(covers(schedule({}))).toBe(true);
    expect(covers(cron("0 * * * *"))).toBe(true);
    expect(covers(schedule({ kind: "ONCE", everyMs: null, every: null, atMs: 1 }))).toBe(false);
    expect(covers(null)).toBe(false);
    expect(covers(schedule({}), { ownerId: "u2" })).toBe(false);
    expect(covers(schedule({}), { ended: true })).toBe(false);
    // An INTERVAL longer than silentFor would be silent between every two runs: not watched (as a rule naming it is refused).
    expect(covers(schedule({ everyMs: 7200_000, every: "PT2H" }))).toBe(false);
    expect(covers(schedule({ everyMs: 3600_000, every: "PT1H" }))).toBe(true);
    // A cron likewise, by its longest gap: a daily one under PT1H is left out, every day's silence being no fault.
    expect(covers(cron("0 3 * * *"))).toBe(false);
    expect(covers(cron("0 3 * * *"), {}, rule({ jobId: null, silentForMs: 86_400_000 }))).toBe(true);
    // Hourly on weekdays: an hour, but 49 hours over each weekend.
    expect(covers(cron("0 * * * 1-5"))).toBe(false);
    expect(covers(cron("0 * * * 1-5"), {}, rule({ jobId: null, silentForMs: 49 * 3600_000 }))).toBe(true);
    // Hourly in Europe/Berlin: two hours across the autumn change (the repeated hour fires once, dstRepeat FIRST).
    expect(covers(cron("0 * * * *", "Europe/Berlin"))).toBe(false);
    expect(covers(cron("0 * * * *", "Europe/Berlin"), {}, rule({ jobId: null, silentForMs: 2 * 3600_000 }))).toBe(true);
    expect(covers(cron("0 * * * *", "Europe/Berlin", { dstRepeat: "BOTH" }))).toBe(true);
  });
});
