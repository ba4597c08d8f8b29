/**
 * What a new user meets in their first hour (issue #30), over the real API: the DAG example of
 * docs/dags.md runs as written, a rescheduled job's summary says where its next fire went, a
 * Python script's output comes in the order it was printed, a date-time refused names its field
 * and shows what is allowed, and only IANA zone names are taken, wherever a zone is.
 */
import { readFileSync } from "node:fs";
import { Kind, parse, print } from "graphql";
import { describe, expect, it } from "vitest";
import { finishedDagRun, row } from "../dag/helpers.js";
import { useTestApp } from "../helpers/app.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { finishedRun, submitJob } from "../helpers/job-runs.js";

const t = useTestApp();

/** The operation of docs/dags.md's ```graphql blocks that creates the DAG `name`. */
function docsCreateDag(name: string): string {
  const text = readFileSync("docs/dags.md", "utf8");
  for (const m of text.matchAll(/```graphql\n([\s\S]*?)```/g)) {
    for (const def of parse(m[1]!).definitions) {
      if (def.kind === Kind.OPERATION_DEFINITION && print(def).includes(`createDag`) && print(def).includes(`name: "${name}"`)) return print(def);
    }
  }
  throw new Error(`docs/dags.md has no createDag of "${name}"`);
}

describe("the first hour", () => {
  it("docs/dags.md's example DAG runs as written: extract, three transforms, load, report", async () => {
    const created = await gqlOk<{ createDag: { id: string; topologicalOrder: string[] } }>(t.app.url, docsCreateDag("etl"), {}, t.admin);
    expect(created.createDag.topologicalOrder).toEqual(["extract", "transform", "load", "report"]);
    const trigger = await gqlOk<{ triggerDag: { id: string } }>(
      t.app.url,
      `mutation($id: ID!) { triggerDag(id: $id, params: { day: "2026-11-24" }) { id } }`,
      { id: created.createDag.id },
      t.admin,
    );
    const run = await finishedDagRun(t.app.url, t.admin, trigger.triggerDag.id, 120_000);
    const failed = run.tasks.filter((x) => x.status !== "SUCCEEDED").map((x) => ({ key: x.key, note: x.note, error: x.run?.error, out: x.run?.outputTail }));
    expect(failed).toEqual([]);
    expect(run.status).toBe("SUCCEEDED");
    expect(row(run, "transform", 1).run?.outputTail).toBe("2026-11-24: refunds -> 20 rows\n");
    expect(row(run, "load").result).toEqual({ rows: 60 });
    expect(JSON.parse(row(run, "report").run!.outputTail!)).toEqual({ load: { rows: 60 } });
  });

  it("a rescheduled recurring job's summary says where its next fire went, and the mutation returns it", async () => {
    const job = await gqlOk<{ createJob: { id: string; schedule: { description: string } } }>(
      t.app.url,
      `mutation { createJob(input: { name: "hourly", schedule: { kind: INTERVAL, every: "PT1H" }, spec: { command: "true" } }) { id schedule { description } } }`,
      {},
      t.admin,
    );
    expect(job.createJob.schedule.description).toMatch(/^every 1 h from \S+Z$/);
    const at = new Date(Math.ceil((Date.now() + 3 * 60_000) / 1000) * 1000).toISOString();
    const moved = await gqlOk<{ rescheduleJob: { nextFireAt: string; schedule: { description: string } } }>(
      t.app.url,
      `mutation($id: ID!, $at: DateTime!) { rescheduleJob(id: $id, at: $at) { nextFireAt schedule { description } } }`,
      { id: job.createJob.id, at },
      t.admin,
    );
    expect(moved.rescheduleJob.nextFireAt).toBe(at);
    expect(moved.rescheduleJob.schedule.description).toBe(`${job.createJob.schedule.description}; next fire rescheduled to ${at}, then as scheduled`);

    const once = await gqlOk<{ createJob: { id: string } }>(
      t.app.url,
      `mutation { createJob(input: { name: "later", schedule: { kind: ONCE, at: "2031-01-01T00:00:00Z" }, spec: { command: "true" } }) { id } }`,
      {},
      t.admin,
    );
    const onceMoved = await gqlOk<{ rescheduleJob: { schedule: { description: string } } }>(
      t.app.url,
      `mutation($id: ID!) { rescheduleJob(id: $id, at: "2032-02-02T00:00:00Z") { schedule { description } } }`,
      { id: once.createJob.id },
      t.admin,
    );
    expect(onceMoved.rescheduleJob.schedule.description).toBe("once at 2032-02-02T00:00:00.000Z");
  });

  it("a python3 script's stdout and stderr come in the order it printed them (unbuffered)", async () => {
    // A pause between prints: two pipes are read in the order their output arrives (docs/logs.md).
    const source = 'import sys, time\nprint("one")\ntime.sleep(0.2)\nprint("two", file=sys.stderr)\ntime.sleep(0.2)\nprint("three")\nraise SystemExit(3)\n';
    const jobId = await submitJob(t.app.url, t.admin, { kind: "SCRIPT", interpreter: "python3", source });
    const run = await finishedRun(t.app.url, t.admin, jobId);
    expect(run.exitCode).toBe(3);
    expect(run.outputTail).toBe("one\ntwo\nthree\n");
    // The job's own env still decides.
    const buffered = await submitJob(t.app.url, t.admin, { kind: "SCRIPT", interpreter: "python3", source, env: { PYTHONUNBUFFERED: "" } });
    expect((await finishedRun(t.app.url, t.admin, buffered)).outputTail).toBe("two\none\nthree\n");
  });
});

const NO_ZONE = '"2030-01-01T09:00:00" has no time zone: add Z for UTC or an offset, such as "2030-01-01T09:00:00Z" or "2030-01-01T09:00:00+01:00"';
const NOT_A_DATE = '"tomorrow" is not a date-time; a date-time is RFC 3339 with a time zone, such as "2030-01-01T09:00:00Z" (UTC) or "2030-01-01T09:00:00+01:00"';

describe("date-time input", () => {
  const create = (at: string) => `mutation { createJob(input: { name: "dt", schedule: { kind: ONCE, at: "${at}" }, spec: { command: "true" } }) { id } }`;

  it("a literal names its field and shows what is allowed, once", async () => {
    for (const [at, why] of [["2030-01-01T09:00:00", NO_ZONE], ["tomorrow", NOT_A_DATE]] as const) {
      const r = await gql(t.app.url, create(at), {}, t.admin);
      expect(r.errors, at).toHaveLength(1);
      expect(r.errors?.[0]?.message).toBe(`schedule.at: ${why}`);
      // Refused while the document is validated, as a bad input like any other (an Int's too): its field named.
      expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "schedule.at" });
    }
    const moved = await gql(t.app.url, `mutation { rescheduleJob(id: "0123456789abcdef01234567", at: "2030-01-01T09:00") { id } }`, {}, t.admin);
    expect(moved.errors?.map((e) => e.message)).toEqual(['at: "2030-01-01T09:00" has no time zone: add Z for UTC or an offset, such as "2030-01-01T09:00:00Z" or "2030-01-01T09:00:00+01:00"']);
    const wrongType = await gql(t.app.url, `mutation { rescheduleJob(id: "0123456789abcdef01234567", at: 1893488400) { id } }`, {}, t.admin);
    expect(wrongType.errors?.[0]?.message).toMatch(/^at: expected a date-time string, got a number; a date-time is quoted, such as "2030-01-01T09:00:00Z"$/);
  });

  it("a variable names its field, with the same words, and which variable it was", async () => {
    const r = await gql(
      t.app.url,
      `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
      { input: { name: "dt", schedule: { kind: "ONCE", at: "tomorrow" }, spec: { command: "true" } } },
      t.admin,
    );
    expect(r.errors?.[0]?.message).toBe(`schedule.at: ${NOT_A_DATE} (in $input.schedule.at)`);
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "schedule.at" });
  });

  it("a valid one is taken as before, with an offset too", async () => {
    const ok = await gqlOk<{ createJob: { schedule: { at: string } } }>(t.app.url, create("2030-01-01T09:00:00+01:00").replace("{ id }", "{ schedule { at } }"), {}, t.admin);
    expect(ok.createJob.schedule.at).toBe("2030-01-01T08:00:00.000Z");
    // null where a DateTime may be null is no date-time to refuse: a ONCE job without `at` runs now.
    expect((await gql(t.app.url, create("x").replace('at: "x"', "at: null").replace('name: "dt"', 'name: "dt-now"'), {}, t.admin)).errors).toBeUndefined();
  });
});

describe("time zone names: IANA only, wherever a zone is taken", () => {
  const PST = '"PST" is a time zone abbreviation, not an IANA time zone name: use the zone of a place (its daylight saving rules included), such as "America/Los_Angeles", or "UTC"';
  const cron = (timezone: string) => ({ kind: "CRON", cron: "0 9 * * *", timezone });

  it("refuses PST on a job, a DAG and a preview, naming the zone to use; takes America/Los_Angeles", async () => {
    const job = await gql(t.app.url, `mutation($s: ScheduleInput!) { createJob(input: { name: "tz", schedule: $s, spec: { command: "true" } }) { id } }`, { s: cron("PST") }, t.admin);
    expect(job.errors?.[0]?.message).toBe(`schedule.timezone: ${PST}`);
    expect(job.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "schedule.timezone" });
    const dag = await gql(
      t.app.url,
      `mutation($s: ScheduleInput!) { createDag(input: { name: "tz", schedule: $s, tasks: [{ key: "a", spec: { command: "true" } }] }) { id } }`,
      { s: cron("EST") },
      t.admin,
    );
    expect(dag.errors?.[0]?.message).toMatch(/timezone: "EST" is a time zone abbreviation, not an IANA time zone name: .*"America\/New_York"/);
    const preview = await gql(t.app.url, `query($s: ScheduleInput!) { previewSchedule(schedule: $s) { description } }`, { s: cron("PST") }, t.admin);
    expect(preview.errors?.[0]?.message).toBe(`schedule.timezone: ${PST}`);
    const ok = await gqlOk<{ previewSchedule: { description: string } }>(t.app.url, `query($s: ScheduleInput!) { previewSchedule(schedule: $s) { description } }`, { s: cron("America/Los_Angeles") }, t.admin);
    expect(ok.previewSchedule.description).toBe("cron 0 9 * * * in America/Los_Angeles");
  });

  it("an edit is held to the same rule", async () => {
    const id = (await gqlOk<{ createJob: { id: string } }>(t.app.url, `mutation($s: ScheduleInput!) { createJob(input: { name: "tz-edit", schedule: $s, spec: { command: "true" } }) { id } }`, { s: cron("US/Pacific") }, t.admin)).createJob.id;
    const r = await gql(t.app.url, `mutation($id: ID!, $s: ScheduleInput!) { updateJob(id: $id, input: { schedule: $s }) { id } }`, { id, s: cron("CET") }, t.admin);
    expect(r.errors?.[0]?.message).toMatch(/^schedule\.timezone: "CET" is a time zone abbreviation, not an IANA time zone name: .*"Europe\/Berlin"/);
  });
});
