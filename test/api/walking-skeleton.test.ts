/**
 * Issue #3's promise, end to end over real HTTP and WebSocket: log in, create an every-second
 * job, watch its runs through `runUpdated`, read them back through `runs`.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { collect, gql, gqlOk, waitFor, wsClient } from "../helpers/graphql.js";

const RUN_FIELDS = `id jobId status attempt scheduledFor startedAt finishedAt exitCode nodeId outputTail`;

interface RunEvent {
  runUpdated: { id: string; jobId: string; status: string; exitCode: number | null; outputTail: string | null; nodeId: string | null };
}

const t = useTestApp();

describe("walking skeleton", () => {
  it("streams runUpdated events of an every-second job and pages its runs newest first", async () => {
    const created = await gqlOk<{ createJob: { id: string; status: string; nextFireAt: string } }>(
      t.app.url,
      `mutation($input: CreateJobInput!) { createJob(input: $input) { id status nextFireAt } }`,
      {
        input: {
          name: "every-second",
          schedule: { kind: "CRON", cron: "* * * * * *" },
          spec: { kind: "COMMAND", command: "echo tick $KAIROS_ATTEMPT" },
        },
      },
      t.admin,
    );
    const jobId = created.createJob.id;
    expect(created.createJob.status).toBe("ACTIVE");

    const client = wsClient(t.app.wsUrl, t.admin);
    try {
      const succeeded = (evs: RunEvent[]) => evs.filter((e) => e.runUpdated.status === "SUCCEEDED").length;
      const sub = collect<RunEvent>(
        client,
        `subscription($jobId: ID) { runUpdated(jobId: $jobId) { ${RUN_FIELDS} } }`,
        { jobId },
        (evs) => succeeded(evs) >= 3,
        15_000,
      );
      const { events, errors } = await sub.done;
      expect(errors).toEqual([]);
      expect(succeeded(events)).toBeGreaterThanOrEqual(3);
      // Every event is for this job, and the statuses of one run arrive in lifecycle order.
      expect(events.every((e) => e.runUpdated.jobId === jobId)).toBe(true);
      const byRun = new Map<string, string[]>();
      for (const e of events) byRun.set(e.runUpdated.id, [...(byRun.get(e.runUpdated.id) ?? []), e.runUpdated.status]);
      const order = ["QUEUED", "RUNNING", "SUCCEEDED"];
      for (const statuses of byRun.values()) {
        const idx = statuses.map((s) => order.indexOf(s));
        expect(idx).toEqual([...idx].sort((a, b) => a - b));
      }
      const done = events.filter((e) => e.runUpdated.status === "SUCCEEDED");
      for (const e of done) {
        expect(e.runUpdated.exitCode).toBe(0);
        expect(e.runUpdated.outputTail).toBe("tick 1\n");
        expect(e.runUpdated.nodeId).toBeTruthy();
      }

      // The same runs, read back through the paged history.
      type RunsPage = { runs: { edges: Array<{ node: { id: string; status: string; scheduledFor: string } }>; pageInfo: { hasNextPage: boolean; endCursor: string } } };
      const page1 = await gqlOk<RunsPage>(
        t.app.url,
        `query($jobId: ID!, $first: Int, $after: String) { runs(jobId: $jobId, first: $first, after: $after) { edges { node { ${RUN_FIELDS} } } pageInfo { hasNextPage endCursor } } }`,
        { jobId, first: 2 },
        t.admin,
      );
      expect(page1.runs.edges).toHaveLength(2);
      expect(page1.runs.pageInfo.hasNextPage).toBe(true);
      const all: Array<{ id: string; status: string; scheduledFor: string }> = page1.runs.edges.map((e) => e.node);
      let after: string | null = page1.runs.pageInfo.endCursor;
      while (after) {
        const next: RunsPage = await gqlOk<RunsPage>(
          t.app.url,
          `query($jobId: ID!, $after: String) { runs(jobId: $jobId, first: 2, after: $after) { edges { node { ${RUN_FIELDS} } } pageInfo { hasNextPage endCursor } } }`,
          { jobId, after },
          t.admin,
        );
        all.push(...next.runs.edges.map((e) => e.node));
        after = next.runs.pageInfo.hasNextPage ? next.runs.pageInfo.endCursor : null;
      }
      const times = all.map((r) => Date.parse(r.scheduledFor));
      expect(times).toEqual([...times].sort((a, b) => b - a));
      expect(new Set(all.map((r) => r.id)).size).toBe(all.length);
      for (const e of done) {
        expect(all.find((r) => r.id === e.runUpdated.id)?.status).toBe("SUCCEEDED");
      }
      // Fires are one second apart, on the second.
      const sorted = [...times].sort((a, b) => a - b);
      for (const t of sorted) expect(t % 1000).toBe(0);
    } finally {
      await client.dispose();
      await gqlOk(t.app.url, `mutation($id: ID!) { deleteJob(id: $id) }`, { id: jobId }, t.admin);
    }
  });

  it("runs a job once now, once at a time, and once after a delay", async () => {
    const make = (name: string, schedule: Record<string, unknown>) =>
      gqlOk<{ createJob: { id: string } }>(
        t.app.url,
        `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
        { input: { name, schedule, spec: { kind: "COMMAND", argv: ["/bin/echo", name] } } },
        t.admin,
      ).then((d) => d.createJob.id);
    const at = new Date(Date.now() + 1_500).toISOString();
    const ids = await Promise.all([
      make("once-now", { kind: "ONCE" }),
      make("once-at", { kind: "ONCE", at }),
      make("once-delay", { kind: "ONCE", delay: "PT1S" }),
    ]);
    for (const [i, id] of ids.entries()) {
      const run = await waitFor(async () => {
        const d = await gqlOk<{ runs: { edges: Array<{ node: { status: string; outputTail: string; scheduledFor: string } }> } }>(
          t.app.url,
          `query($id: ID!) { runs(jobId: $id) { edges { node { status outputTail scheduledFor } } } }`,
          { id },
          t.admin,
        );
        const n = d.runs.edges[0]?.node;
        return n && n.status === "SUCCEEDED" ? { n, count: d.runs.edges.length } : null;
      }, 10_000);
      expect(run.count).toBe(1);
      expect(run.n.outputTail).toBe(`${["once-now", "once-at", "once-delay"][i]}\n`);
      if (i === 1) expect(run.n.scheduledFor).toBe(at);
      const job = await gqlOk<{ job: { status: string; nextFireAt: string | null } }>(
        t.app.url,
        `query($id: ID!) { job(id: $id) { status nextFireAt } }`,
        { id },
        t.admin,
      );
      expect(job.job.status).toBe("COMPLETED");
      expect(job.job.nextFireAt).toBeNull();
    }
  });

  it("pauses, resumes, updates, triggers, reschedules and deletes a job", async () => {
    const id = (
      await gqlOk<{ createJob: { id: string } }>(
        t.app.url,
        `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
        { input: { name: "controls", schedule: { kind: "INTERVAL", every: "PT1H" }, spec: { kind: "COMMAND", command: "echo one" } } },
        t.admin,
      )
    ).createJob.id;

    const paused = await gqlOk<{ pauseJob: { paused: boolean; status: string; nextFireAt: string | null } }>(
      t.app.url, `mutation($id: ID!) { pauseJob(id: $id) { paused status nextFireAt } }`, { id }, t.admin);
    expect(paused.pauseJob).toEqual({ paused: true, status: "PAUSED", nextFireAt: null });

    const resumed = await gqlOk<{ resumeJob: { paused: boolean; status: string; nextFireAt: string } }>(
      t.app.url, `mutation($id: ID!) { resumeJob(id: $id) { paused status nextFireAt } }`, { id }, t.admin);
    expect(resumed.resumeJob.paused).toBe(false);
    expect(Date.parse(resumed.resumeJob.nextFireAt)).toBeGreaterThan(Date.now() + 50 * 60_000);

    const updated = await gqlOk<{ updateJob: { spec: { command: string }; priority: number; version: number } }>(
      t.app.url,
      `mutation($id: ID!, $input: UpdateJobInput!) { updateJob(id: $id, input: $input) { spec { command } priority version } }`,
      { id, input: { spec: { kind: "COMMAND", command: "echo two" }, priority: 8 } },
      t.admin,
    );
    expect(updated.updateJob.spec.command).toBe("echo two");
    expect(updated.updateJob.priority).toBe(8);

    const trig = await gqlOk<{ triggerJob: { id: string; trigger: string } }>(
      t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id trigger } }`, { id }, t.admin);
    expect(trig.triggerJob.trigger).toBe("MANUAL");
    const ran = await waitFor(async () => {
      const d = await gqlOk<{ run: { status: string; outputTail: string } }>(
        t.app.url, `query($id: ID!) { run(id: $id) { status outputTail } }`, { id: trig.triggerJob.id }, t.admin);
      return d.run.status === "SUCCEEDED" ? d.run : null;
    }, 10_000);
    expect(ran.outputTail).toBe("two\n");

    const at = new Date(Math.ceil((Date.now() + 1_000) / 1000) * 1000).toISOString();
    const resched = await gqlOk<{ rescheduleJob: { nextFireAt: string } }>(
      t.app.url, `mutation($id: ID!, $at: DateTime!) { rescheduleJob(id: $id, at: $at) { nextFireAt } }`, { id, at }, t.admin);
    expect(resched.rescheduleJob.nextFireAt).toBe(at);
    const fired = await waitFor(async () => {
      const d = await gqlOk<{ runs: { edges: Array<{ node: { scheduledFor: string; status: string; trigger: string } }> } }>(
        t.app.url, `query($id: ID!) { runs(jobId: $id) { edges { node { scheduledFor status trigger } } } }`, { id }, t.admin);
      return d.runs.edges.find((e) => e.node.scheduledFor === at && e.node.status === "SUCCEEDED");
    }, 10_000);
    expect(fired.node.trigger).toBe("SCHEDULE");
    const after = await gqlOk<{ job: { nextFireAt: string } }>(t.app.url, `query($id: ID!) { job(id: $id) { nextFireAt } }`, { id }, t.admin);
    expect(Date.parse(after.job.nextFireAt)).toBeGreaterThan(Date.parse(at));

    const del = await gqlOk<{ deleteJob: string }>(t.app.url, `mutation($id: ID!) { deleteJob(id: $id) }`, { id }, t.admin);
    expect(del.deleteJob).toBe(id);
    const gone = await gql(t.app.url, `query($id: ID!) { job(id: $id) { id } }`, { id }, t.admin);
    expect(gone.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
  });
});
