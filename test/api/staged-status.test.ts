/**
 * Runs staged ahead of their fire time, as the API shows them (issue #30, item 7): a staged run
 * reads SCHEDULED (not QUEUED) until its time, in reads, filters and subscription events; a staged
 * run taken back by a pause or an edit reads WITHDRAWN, out of the CANCELLED a user filters for and
 * out of runs lists unless asked for; a user's cancel is still CANCELLED.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/tokens.js";
import { metrics } from "../../src/support/metrics.js";
import { useTestApp } from "../helpers/app.js";
import { code } from "../helpers/accounts.js";
import { collect, gql, gqlOk, waitFor, wsClient } from "../helpers/graphql.js";

const t = useTestApp({ scheduler: { stageAheadMs: 10_000 } });
const caller: Principal = { userId: "000000000000000000000078", username: "staged-status", role: "ADMIN" };
const clients: Array<ReturnType<typeof wsClient>> = [];
afterAll(async () => {
  for (const c of clients) await c.dispose();
});

interface RunNode {
  id: string;
  status: string;
  scheduledFor: string;
  notBefore: string | null;
  history: Array<{ status: string; reason: string | null }>;
}

const RUNS = `query($jobId: ID, $status: RunStatus, $filter: RunFilter) {
  runs(jobId: $jobId, status: $status, filter: $filter, first: 100) { edges { node { id status scheduledFor notBefore history { status reason } } } }
}`;

async function runs(vars: Record<string, unknown>): Promise<RunNode[]> {
  return (await gqlOk<{ runs: { edges: Array<{ node: RunNode }> } }>(t.app.url, RUNS, vars, t.admin)).runs.edges.map((e) => e.node);
}

const stored = (jobId: string) => t.app.services.mongo.c.runs.find({ jobId }).toArray();

/** Waits until the job has `n` runs staged (stored QUEUED with a notBefore still to come). */
async function stagedRuns(jobId: string, n: number) {
  return waitFor(async () => {
    const rs = (await stored(jobId)).filter((r) => r.status === "QUEUED" && r.notBefore && r.notBefore.getTime() > Date.now());
    return rs.length >= n ? rs : null;
  }, 8_000, 20);
}

describe("runs staged ahead of their time", () => {
  it("read SCHEDULED until their time, in reads, filters and events; no QUEUED event is sent for them; QUEUED once their time has come", async () => {
    const client = wsClient(t.app.wsUrl, t.admin);
    clients.push(client);
    type Event = { runUpdated: { id: string; jobId: string; status: string } };
    let jobId = "";
    const ofJob = (events: Event[]) => events.map((e) => e.runUpdated).filter((r) => r.jobId === jobId);
    const sub = collect<Event>(client, `subscription { runUpdated { id jobId status } }`, {}, (events) => ofJob(events).length >= 2, 20_000);
    await sub.ready;
    // No executor serves this pool: the runs stay where staging puts them, whatever the machine's
    // load; the slots are 8 s and more ahead, so the reads below happen well before their time.
    const startAt = Date.now() + 8_000;
    const job = await t.app.services.jobs.create(caller, {
      name: "staged-every-1s",
      schedule: { kind: "INTERVAL", every: "PT1S", startAt },
      spec: { kind: "COMMAND", command: "true", pool: "staged-nowhere" },
    });
    jobId = job._id;
    const staged = await stagedRuns(job._id, 2);
    const { events } = await sub.done;
    const mine = ofJob(events);
    expect(mine.length).toBeGreaterThanOrEqual(2);
    expect(mine.map((r) => r.status)).toEqual(mine.map(() => "SCHEDULED"));

    const asOf = Date.now();
    const ahead = staged.filter((r) => r.notBefore!.getTime() > asOf + 3_000).map((r) => r._id);
    expect(ahead.length).toBeGreaterThanOrEqual(1);
    const one = await gqlOk<{ run: { status: string; notBefore: string } }>(t.app.url, `query($id: ID!) { run(id: $id) { status notBefore } }`, { id: ahead[0] }, t.admin);
    expect(one.run).toEqual({ status: "SCHEDULED", notBefore: staged.find((r) => r._id === ahead[0])!.notBefore!.toISOString() });
    const ids = (rs: RunNode[]) => rs.map((r) => r.id);
    expect(ids(await runs({ jobId: job._id, status: "SCHEDULED" }))).toEqual(expect.arrayContaining(ahead));
    expect(ids(await runs({ jobId: job._id, filter: { staged: true } }))).toEqual(expect.arrayContaining(ahead));
    const queued = ids(await runs({ jobId: job._id, status: "QUEUED" }));
    const notStaged = ids(await runs({ jobId: job._id, filter: { staged: false } }));
    for (const r of ahead) {
      expect(queued).not.toContain(r);
      expect(notStaged).not.toContain(r);
    }
    // The search across all runs (no job) agrees.
    expect(ids(await runs({ status: "SCHEDULED" }))).toEqual(expect.arrayContaining(ahead));

    // Its time comes and no executor takes it: from then on it reads QUEUED, and is no longer staged.
    const first = staged.sort((a, b) => a.notBefore!.getTime() - b.notBefore!.getTime())[0]!;
    await new Promise((r) => setTimeout(r, first.notBefore!.getTime() + 200 - Date.now()));
    const due = await gqlOk<{ run: { status: string } }>(t.app.url, `query($id: ID!) { run(id: $id) { status } }`, { id: first._id }, t.admin);
    expect(due.run.status).toBe("QUEUED");
    expect(ids(await runs({ jobId: job._id, status: "QUEUED" }))).toContain(first._id);
    expect(ids(await runs({ jobId: job._id, filter: { staged: false } }))).toContain(first._id);
    expect(ids(await runs({ jobId: job._id, status: "SCHEDULED" }))).not.toContain(first._id);
    await t.app.services.jobs.delete(caller, job._id);
  });

  it("a pause takes the staged runs back as WITHDRAWN: not CANCELLED, left out of runs lists unless asked for, and not retryable", async () => {
    const startAt = Date.now() + 8_000;
    const job = await t.app.services.jobs.create(caller, { name: "staged-pause", schedule: { kind: "INTERVAL", every: "PT1S", startAt }, spec: { kind: "COMMAND", command: "true" } });
    const staged = await stagedRuns(job._id, 2);
    const counted = async (status: string) => (await metrics.runsFinished.get()).values.find((v) => v.labels.status === status)?.value ?? 0;
    const [withdrawnBefore, cancelledBefore] = [await counted("WITHDRAWN"), await counted("CANCELLED")];
    await t.app.services.jobs.pause(caller, job._id);
    // Counted as withdrawn, not as cancels (kairos_runs_finished_total{status}).
    expect((await counted("WITHDRAWN")) - withdrawnBefore).toBeGreaterThanOrEqual(2);
    expect(await counted("CANCELLED")).toBe(cancelledBefore);
    // Stored as before: CANCELLED, marked withdrawn.
    const after = await stored(job._id);
    expect(after.length).toBeGreaterThanOrEqual(2);
    expect(after.every((r) => r.status === "CANCELLED" && r.withdrawn === true)).toBe(true);

    expect(await runs({ jobId: job._id, status: "CANCELLED" })).toEqual([]);
    expect(await runs({ jobId: job._id })).toEqual([]);
    const withdrawn = await runs({ jobId: job._id, status: "WITHDRAWN" });
    expect(withdrawn.map((r) => r.id).sort()).toEqual(after.map((r) => r._id).sort());
    for (const r of withdrawn) {
      expect(r.status).toBe("WITHDRAWN");
      expect(r.history.at(-1)!.status).toBe("WITHDRAWN");
      expect(r.history.at(-1)!.reason).toMatch(/^withdrawn before its fire time: /);
    }
    expect((await runs({ status: "CANCELLED" })).map((r) => r.id)).not.toEqual(expect.arrayContaining([staged[0]!._id]));

    const retry = await gql(t.app.url, `mutation($id: ID!) { retryRun(id: $id) { id status } }`, { id: staged[0]!._id }, t.admin);
    expect(retry.errors?.[0]?.message).toMatch(/is WITHDRAWN: it was taken back before its fire time and its slot was judged again/);
    expect(["CONFLICT", "FAILED_PRECONDITION"]).toContain(code(retry));
    // The job's last run is none of them: they never ran.
    const view = await gqlOk<{ job: { lastRun: unknown } }>(t.app.url, `query($id: ID!) { job(id: $id) { lastRun { id } } }`, { id: job._id }, t.admin);
    expect(view.job.lastRun).toBeNull();
  });

  it("an edit inside the window withdraws the staged run; the slot runs once with the new spec, and a user's cancel of a staged run is CANCELLED", async () => {
    const at = Date.now() + 3_000;
    const job = await t.app.services.jobs.create(caller, { name: "staged-edit", schedule: { kind: "ONCE", at }, spec: { kind: "COMMAND", command: "echo old" } });
    const [old] = await stagedRuns(job._id, 1);
    await t.app.services.jobs.update(caller, job._id, { spec: { kind: "COMMAND", command: "echo new" } });
    const done = await waitFor(async () => (await stored(job._id)).find((r) => r.status === "SUCCEEDED"), 10_000, 50);
    expect(done.outputTail).toBe("new\n");
    expect(await runs({ jobId: job._id, status: "CANCELLED" })).toEqual([]);
    expect((await runs({ jobId: job._id, status: "WITHDRAWN" })).map((r) => r.id)).toEqual([old!._id]);
    expect((await runs({ jobId: job._id })).map((r) => [r.id, r.status])).toEqual([[done._id, "SUCCEEDED"]]);

    // A user who cancels a run that is staged cancels it: that one is CANCELLED.
    const later = await t.app.services.jobs.create(caller, { name: "staged-cancel", schedule: { kind: "ONCE", delay: "PT5S" }, spec: { kind: "COMMAND", command: "true" } });
    const [run] = await stagedRuns(later._id, 1);
    const cancelled = await gqlOk<{ cancelRun: { status: string } }>(t.app.url, `mutation($id: ID!) { cancelRun(id: $id) { status } }`, { id: run!._id }, t.admin);
    expect(cancelled.cancelRun.status).toBe("CANCELLED");
    expect((await runs({ jobId: later._id, status: "CANCELLED" })).map((r) => r.id)).toEqual([run!._id]);
  });

  it("refuses a staged filter that contradicts the status", async () => {
    for (const [status, staged] of [["QUEUED", true], ["SCHEDULED", false]] as const) {
      const res = await gql(t.app.url, RUNS, { status, filter: { staged } }, t.admin);
      expect(code(res)).toBe("BAD_USER_INPUT");
      expect(res.errors![0]!.message).toMatch(new RegExp(`staged: ${staged} with status ${status} matches no run`));
    }
  });
});
