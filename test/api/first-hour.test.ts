/**
 * What a new user meets in their first hour (issue #30), over the real API: the DAG example of
 * docs/dags.md runs as written, a rescheduled job's summary says where its next fire went, and a
 * Python script's output comes in the order it was printed.
 */
import { readFileSync } from "node:fs";
import { Kind, parse, print } from "graphql";
import { describe, expect, it } from "vitest";
import { finishedDagRun, row } from "../dag/helpers.js";
import { useTestApp } from "../helpers/app.js";
import { gqlOk } from "../helpers/graphql.js";
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
