/**
 * previewSchedule (issue #28): an unsaved schedule's summary and next fires, computed and checked
 * by the code createJob and Job.nextFires use, so a preview says what the saved job will do and
 * refuses what createJob refuses, with the same error.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { code } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";

const t = useTestApp();
const PREVIEW = `query($s: ScheduleInput!, $n: Int) { previewSchedule(schedule: $s, count: $n) { description nextFires { at local dst } } }`;
const CREATE = `mutation($input: CreateJobInput!) { createJob(input: $input) { id schedule { description } nextFires(count: 6) { at local dst } } }`;

let jobs = 0;
/** What a job created with `schedule` shows: its schedule's description and next fires. */
async function saved(schedule: Record<string, unknown>) {
  const input = { name: `preview-${++jobs}`, schedule, spec: { kind: "COMMAND", command: "true" }, paused: false };
  const job = (await gqlOk(t.app.url, CREATE, { input }, t.admin)).createJob;
  await gqlOk(t.app.url, `mutation($id: ID!) { deleteJob(id: $id) }`, { id: job.id }, t.admin);
  return { description: job.schedule.description as string, nextFires: job.nextFires as Array<{ at: string; local: string; dst: string | null }> };
}

describe("previewSchedule", () => {
  it("shows a cron in its zone across a daylight-saving change, as the saved job shows it", async () => {
    // 02:30 does not exist in Berlin on 2030-03-31 (clocks go 02:00 → 03:00): shifted to the gap's end by default.
    const schedule = { kind: "CRON", cron: "30 2 * * *", timezone: "Europe/Berlin", startAt: "2030-03-29T00:00:00Z" };
    const p = (await gqlOk(t.app.url, PREVIEW, { s: schedule, n: 6 }, t.admin)).previewSchedule;
    expect(p.description).toBe("cron 30 2 * * * in Europe/Berlin");
    expect(p.nextFires.map((f: { local: string }) => f.local)).toEqual([
      "2030-03-29T02:30:00+01:00",
      "2030-03-30T02:30:00+01:00",
      "2030-03-31T03:00:00+02:00",
      "2030-04-01T02:30:00+02:00",
      "2030-04-02T02:30:00+02:00",
      "2030-04-03T02:30:00+02:00",
    ]);
    expect(p.nextFires[2]).toEqual({ at: "2030-03-31T01:00:00.000Z", local: "2030-03-31T03:00:00+02:00", dst: "GAP_SHIFTED" });
    expect(p.nextFires.filter((f: { dst: string | null }) => f.dst !== null)).toHaveLength(1);
    expect(p).toEqual(await saved(schedule));
    // Autumn: 02:30 happens twice on 2030-10-27; FIRST (the default) fires once.
    const autumn = { kind: "CRON", cron: "30 2 * * *", timezone: "Europe/Berlin", startAt: "2030-10-26T00:00:00Z" };
    const a = (await gqlOk(t.app.url, PREVIEW, { s: autumn, n: 3 }, t.admin)).previewSchedule;
    expect(a.nextFires.map((f: { at: string }) => f.at)).toEqual(["2030-10-26T00:30:00.000Z", "2030-10-27T00:30:00.000Z", "2030-10-28T01:30:00.000Z"]);
  });

  it("shows an interval from its start, five fires by default, at most 100", async () => {
    const schedule = { kind: "INTERVAL", every: "PT15M", startAt: "2031-01-01T00:00:00Z" };
    const p = (await gqlOk(t.app.url, PREVIEW, { s: schedule }, t.admin)).previewSchedule;
    expect(p.description).toBe("every 15 min from 2031-01-01T00:00:00.000Z");
    expect(p.nextFires.map((f: { at: string }) => f.at)).toEqual(["00:00", "00:15", "00:30", "00:45", "01:00"].map((hm) => `2031-01-01T${hm}:00.000Z`));
    expect(p.nextFires[0]).toEqual({ at: "2031-01-01T00:00:00.000Z", local: "2031-01-01T00:00:00+00:00", dst: null });
    const saw = await saved(schedule);
    expect(p.description).toBe(saw.description);
    expect(p.nextFires).toEqual(saw.nextFires.slice(0, 5));
    expect((await gqlOk(t.app.url, PREVIEW, { s: schedule, n: 100 }, t.admin)).previewSchedule.nextFires).toHaveLength(100);
    for (const n of [0, 101]) {
      const r = await gql(t.app.url, PREVIEW, { s: schedule, n }, t.admin);
      expect(r.errors?.[0]).toMatchObject({ message: "count: must be from 1 to 100", extensions: { code: "BAD_USER_INPUT", field: "count" } });
    }
  });

  it("refuses what createJob refuses, with the same error", async () => {
    for (const schedule of [
      { kind: "CRON", cron: "61 * * * *" },
      { kind: "CRON", cron: "* * * * *", timezone: "Mars/Olympus" },
      { kind: "INTERVAL" },
      { kind: "INTERVAL", every: "PT0.1S" },
      { kind: "ONCE", every: "PT1M" },
      // Valid, but no fire in its window.
      { kind: "CRON", cron: "0 12 * * *", startAt: "2030-01-01T00:00:00Z", endAt: "2030-01-01T06:00:00Z" },
    ]) {
      const preview = await gql(t.app.url, PREVIEW, { s: schedule }, t.admin);
      const create = await gql(t.app.url, CREATE, { input: { name: "refused", schedule, spec: { kind: "COMMAND", command: "true" } } }, t.admin);
      expect(code(preview), JSON.stringify(schedule)).toBe("BAD_USER_INPUT");
      const { message, extensions } = create.errors![0]!;
      expect(preview.errors?.[0], JSON.stringify(schedule)).toMatchObject({ message, extensions });
      expect(preview.errors?.[0]?.extensions).toEqual(extensions);
    }
  });

  it("needs a logged-in user", async () => {
    expect(code(await gql(t.app.url, PREVIEW, { s: { kind: "INTERVAL", every: "PT1M" } }))).toBe("UNAUTHENTICATED");
  });
});
