/**
 * Scheduled DAGs' overlap policies over the real API (docs/dags.md, "Schedules"): QUEUE_ONE holds
 * one fire behind the DAG run still running and starts it when that one ends; REPLACE cancels the
 * running DAG run for the new one; a DAG run retried with retryDagRun takes the lock again like a
 * fire (FAILED_PRECONDITION where a fire would be skipped); updateDag(clearSchedule: true) removes the
 * schedule and leaves DAG runs in flight, including one held under QUEUE_ONE, to finish.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { code, message } from "../helpers/accounts.js";
import { gql, gqlOk, waitFor } from "../helpers/graphql.js";
import { DagSchedules } from "../../src/dag/engine/schedules.js";
import { silentLogger } from "../../src/support/log.js";
import { tasksInput, triggerDag, type TaskSpec, tasksPage, listTasks, type AsRead } from "./helpers.js";

const t = useTestApp({ scheduler: { lateToleranceMs: 500, stageAheadMs: 0 } });

interface Fire { slotAt: string; outcome: string; runId: string | null; reason: string | null }
interface TaskRun { key: string; status: string; attempt: number; run: { status: string; startedAt: string | null; finishedAt: string | null } | null }
interface DagRunRow { id: string; status: string; held: boolean; createdAt: string; finishedAt: string | null; tasks: TaskRun[] }

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const EVERY_SECOND = { kind: "CRON", cron: "* * * * * *" };
const DAG_RUN = `id status held createdAt finishedAt ${tasksPage(5, "key status attempt run { status startedAt finishedAt }")}`;

async function createDag(name: string, tasks: TaskSpec[], extra: Record<string, unknown>): Promise<string> {
  const d = await gqlOk<{ createDag: { id: string } }>(t.app.url, `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`, { input: { name, tasks: tasksInput(tasks), ...extra } }, t.admin);
  return d.createDag.id;
}

const setPaused = (id: string, paused: boolean) => gqlOk(t.app.url, `mutation($id: ID!) { ${paused ? "pauseDag" : "resumeDag"}(id: $id) { id } }`, { id }, t.admin);

async function fires(id: string): Promise<Fire[]> {
  const d = await gqlOk<{ dag: { fires: { edges: Array<{ node: Fire }> } } }>(t.app.url, `query($id: ID!) { dag(id: $id) { fires(first: 100) { edges { node { slotAt outcome runId reason } } } } }`, { id }, t.admin);
  return d.dag.fires.edges.map((e) => e.node).reverse();
}

/** The DAG's runs, oldest first. */
async function dagRuns(id: string): Promise<DagRunRow[]> {
  const d = await gqlOk<{ dagRuns: { edges: Array<{ node: AsRead<DagRunRow> }> } }>(t.app.url, `query($id: ID!) { dagRuns(dagId: $id, first: 30) { edges { node { ${DAG_RUN} } } } }`, { id }, t.admin);
  return d.dagRuns.edges.map((e) => listTasks<DagRunRow>(e.node)).reverse();
}

async function dagRun(id: string): Promise<DagRunRow> {
  return listTasks<DagRunRow>((await gqlOk<{ dagRun: AsRead<DagRunRow> }>(t.app.url, `query($id: ID!) { dagRun(id: $id) { ${DAG_RUN} } }`, { id }, t.admin)).dagRun);
}

const allEnded = async (id: string) => ((await dagRuns(id)).every((r) => r.status !== "RUNNING") ? true : null);
const started = (r: DagRunRow) => Date.parse(r.tasks[0]!.run!.startedAt!);
const ended = (r: DagRunRow) => Date.parse(r.finishedAt!);
const lockOf = async (dagId: string) => {
  const j = await t.app.services.mongo.c.jobs.findOne({ _id: dagId });
  return { active: j?.activeRunId ?? null, pending: j?.pendingRunId ?? null };
};
const retry = (id: string) => gql(t.app.url, `mutation($id: ID!) { retryDagRun(id: $id) { ${DAG_RUN} } }`, { id }, t.admin);

describe("overlap policies of scheduled DAGs, a fire coming while the previous DAG run runs", () => {
  it("QUEUE_ONE: one fire waits (held) and starts when the running DAG run ends; further fires are SKIPPED_OVERLAP; runs never overlap", async () => {
    const id = await createDag("queue-one", [{ key: "slow", command: "sleep 2.5" }], { overlap: "QUEUE_ONE", schedule: EVERY_SECOND });
    const heldSeen = await waitFor(async () => (await dagRuns(id)).find((r) => r.held) ?? null, 10_000, 50);
    expect(heldSeen.status).toBe("RUNNING");
    expect(heldSeen.tasks[0]!.status).toBe("PENDING"); // nothing of it started while held
    // Until the held one has started (the first ended) and a fire meanwhile was skipped, not a fixed 3 s.
    await waitFor(async () => ((await dagRun(heldSeen.id)).tasks[0]!.run?.startedAt && (await fires(id)).some((x) => x.outcome === "SKIPPED_OVERLAP")) || null, 20_000, 50);
    await setPaused(id, true);
    await waitFor(() => allEnded(id), 30_000);

    const runs = await dagRuns(id);
    const f = await fires(id);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs.every((r) => r.status === "SUCCEEDED" && !r.held)).toBe(true);
    expect(f.filter((x) => x.outcome === "SKIPPED_OVERLAP").length).toBeGreaterThanOrEqual(1);
    expect(new Set(f.filter((x) => x.outcome === "FIRED").map((x) => x.runId))).toEqual(new Set(runs.map((r) => r.id)));
    // In start order, each DAG run starts after the one before ended; the held one was created before that end.
    const byStart = [...runs].sort((a, b) => started(a) - started(b));
    for (let i = 1; i < byStart.length; i++) expect(started(byStart[i]!)).toBeGreaterThanOrEqual(ended(byStart[i - 1]!));
    expect(byStart.some((r, i) => i > 0 && Date.parse(r.createdAt) < ended(byStart[i - 1]!))).toBe(true);
    expect(await lockOf(id)).toEqual({ active: null, pending: null });
  });

  it("REPLACE: each fire cancels the DAG run still running and runs instead; the last one runs to its end", async () => {
    const id = await createDag("replace", [{ key: "slow", command: "sleep 2.5" }, { key: "after", command: "true", dependsOn: ["slow"] }], { overlap: "REPLACE", schedule: EVERY_SECOND });
    await waitFor(async () => ((await dagRuns(id)).length >= 3 ? true : null), 10_000, 50);
    await setPaused(id, true);
    await waitFor(() => allEnded(id), 30_000);

    const runs = await dagRuns(id);
    const f = await fires(id);
    expect(f.every((x) => x.outcome === "FIRED")).toBe(true);
    expect(new Set(f.map((x) => x.runId))).toEqual(new Set(runs.map((r) => r.id)));
    const last = runs[runs.length - 1]!;
    expect(last.status).toBe("SUCCEEDED");
    for (const [i, r] of runs.slice(0, -1).entries()) {
      expect(r.status).toBe("CANCELLED");
      // Cancelled because the next one came: not before it was created; its task never reached "after".
      expect(ended(r)).toBeGreaterThanOrEqual(Date.parse(runs[i + 1]!.createdAt));
      expect(r.tasks.find((t) => t.key === "after")!.status).toBe("CANCELLED");
    }
    expect(await lockOf(id)).toEqual({ active: null, pending: null });
  });
});

/**
 * A scheduled DAG whose first DAG run A FAILED (its task fails on attempt 1 under params
 * {mode: "fail"}) and whose DAG run B is now RUNNING and holds the lock (params {mode: "slow"}),
 * the schedule paused so that no other fire comes. A's retry (attempt 2) takes `retrySeconds`.
 */
async function failedWhileAnotherRuns(name: string, overlap: string): Promise<{ id: string; a: string; b: string }> {
  const command =
    `mode=$(sed -n 's/.*"mode":"\\([a-z]*\\)".*/\\1/p' "$KAIROS_PARAMS"); ` +
    `if [ "$mode" = fail ] && [ "$KAIROS_TASK_ATTEMPT" = 1 ]; then exit 1; fi; sleep 2.5`;
  const id = await createDag(name, [{ key: "work", command }], { overlap, schedule: EVERY_SECOND, paused: true, params: { mode: "fail" } });
  await setPaused(id, false);
  const a = await waitFor(async () => (await dagRuns(id)).find((r) => r.status === "FAILED") ?? null, 10_000, 50);
  await setPaused(id, true);
  await waitFor(() => allEnded(id), 10_000);
  await gqlOk(t.app.url, `mutation($id: ID!) { updateDag(id: $id, input: { params: { mode: "slow" } }) { id } }`, { id }, t.admin);
  const before = new Set((await dagRuns(id)).map((r) => r.id));
  await setPaused(id, false);
  const b = await waitFor(async () => (await dagRuns(id)).find((r) => !before.has(r.id) && r.tasks[0]!.status === "RUNNING") ?? null, 10_000, 50);
  await setPaused(id, true);
  expect((await lockOf(id)).active).toBe(b.id);
  return { id, a: a.id, b: b.id };
}

describe("retryDagRun of a scheduled DAG run takes the DAG's overlap lock again", () => {
  it("FORBID: refused (FAILED_PRECONDITION, naming the DAG run holding the lock) while another holds it; once free, the retry holds the lock while it runs", async () => {
    const { id, a, b } = await failedWhileAnotherRuns("retry-forbid", "FORBID");
    const refused = await retry(a);
    expect(code(refused)).toBe("FAILED_PRECONDITION");
    expect(message(refused)).toContain(`overlap policy is FORBID and DAG run ${b} holds the lock`);
    expect((await dagRun(a)).status).toBe("FAILED"); // untouched

    await waitFor(async () => ((await dagRun(b)).status === "SUCCEEDED" ? true : null), 20_000);
    const r = await retry(a);
    expect(r.errors).toBeUndefined();
    expect(await lockOf(id)).toEqual({ active: a, pending: null });
    // A fire while the retried DAG run runs is skipped: it holds the lock.
    await setPaused(id, false);
    const skipped = await waitFor(async () => (await fires(id)).find((x) => x.outcome === "SKIPPED_OVERLAP" && x.reason?.includes(a)) ?? null, 10_000, 50);
    expect(skipped.runId).toBeNull();
    await setPaused(id, true);
    const done = await waitFor(async () => {
      const x = await dagRun(a);
      return x.status !== "RUNNING" ? x : null;
    }, 20_000);
    expect(done.status).toBe("SUCCEEDED");
    await waitFor(() => allEnded(id), 20_000);
    expect(await lockOf(id)).toEqual({ active: null, pending: null });
  });

  it("QUEUE_ONE: the retry waits held behind the DAG run holding the lock and starts when it ends", async () => {
    const { id, a, b } = await failedWhileAnotherRuns("retry-queue-one", "QUEUE_ONE");
    const r = await retry(a);
    expect(r.errors).toBeUndefined();
    expect((r.data as { retryDagRun: AsRead<DagRunRow> }).retryDagRun).toMatchObject({ status: "RUNNING", held: true });
    expect(await lockOf(id)).toEqual({ active: b, pending: a });
    const doneA = await waitFor(async () => {
      const x = await dagRun(a);
      return x.status !== "RUNNING" ? x : null;
    }, 30_000);
    expect(doneA.status).toBe("SUCCEEDED");
    const doneB = await dagRun(b);
    expect(doneB.status).toBe("SUCCEEDED");
    const retried = doneA.tasks.find((t) => t.attempt === 2)!;
    expect(Date.parse(retried.run!.startedAt!)).toBeGreaterThanOrEqual(ended(doneB));
    expect(await lockOf(id)).toEqual({ active: null, pending: null });
  });

  it("REPLACE: the retry cancels the DAG run holding the lock and runs in its place", async () => {
    const { id, a, b } = await failedWhileAnotherRuns("retry-replace", "REPLACE");
    const r = await retry(a);
    expect(r.errors).toBeUndefined();
    expect(await lockOf(id)).toMatchObject({ active: a });
    const doneB = await waitFor(async () => {
      const x = await dagRun(b);
      return x.status !== "RUNNING" ? x : null;
    }, 20_000);
    expect(doneB.status).toBe("CANCELLED");
    const doneA = await waitFor(async () => {
      const x = await dagRun(a);
      return x.status !== "RUNNING" ? x : null;
    }, 20_000);
    expect(doneA.status).toBe("SUCCEEDED");
    expect(await lockOf(id)).toEqual({ active: null, pending: null });
  });
});

describe("the sweeper's lock repair", () => {
  it("does not release at first sight a lock held by a DAG run that is not RUNNING (a retry takes the lock before it writes its DAG run RUNNING)", async () => {
    const id = await createDag("repair", [{ key: "a", command: "true" }], { overlap: "FORBID", schedule: { kind: "CRON", cron: "0 0 1 1 *" } });
    const ended = await triggerDag(t.app.url, t.admin, id);
    await waitFor(async () => ((await dagRun(ended)).status === "SUCCEEDED" ? true : null), 20_000);
    // The lock as retryDagRun leaves it between taking it and writing its DAG run RUNNING.
    await t.app.services.mongo.c.jobs.updateOne({ _id: id }, { $set: { activeRunId: ended } });
    const { services } = t.app;
    const repair = new DagSchedules({
      mongo: services.mongo, definitions: services.dagEngine.definitions, jobs: services.jobs, runs: services.runs, clock: Date.now, log: silentLogger(),
      advancer: services.dagEngine.advancer, sweepAfterMs: 5_000, cancel: async () => undefined,
    });
    await repair.repairLocks();
    expect((await lockOf(id)).active).toBe(ended);
    // Seen ended on the next pass too: a lost release, repaired.
    await repair.repairLocks();
    expect((await lockOf(id)).active).toBeNull();
  });
});

describe("updateDag(clearSchedule: true)", () => {
  it("removes the schedule and its timer; the DAG run in flight (a task waiting to retry among it) and the one held behind it finish, also when a schedule is given again meanwhile", async () => {
    const id = await createDag(
      "clear-schedule",
      [
        { key: "slow", command: "sleep 4" },
        // Fails at once, retried 2 s later: its run waits RETRY_SCHEDULED when the schedule is removed.
        { key: "flaky", command: `[ "$KAIROS_ATTEMPT" -ge 2 ] || exit 1`, retry: { maxAttempts: 2, initial: "PT2S", max: "PT2S", jitter: "NONE" } },
      ],
      { overlap: "QUEUE_ONE", schedule: EVERY_SECOND },
    );
    const held = await waitFor(async () => (await dagRuns(id)).find((r) => r.held) ?? null, 10_000, 50);
    const first = (await dagRuns(id)).find((r) => !r.held)!;
    await waitFor(async () => ((await dagRun(first.id)).tasks.find((t) => t.key === "flaky")!.status === "RETRYING" ? true : null), 10_000, 50);

    const both = await gql(t.app.url, `mutation($id: ID!) { updateDag(id: $id, input: { clearSchedule: true, schedule: { kind: ONCE } }) { id } }`, { id }, t.admin);
    expect(code(both), JSON.stringify(both.errors)).toBe("BAD_USER_INPUT");
    expect(message(both)).toMatch(/either a new schedule or clearSchedule: true/);

    const cleared = await gqlOk<{ updateDag: { schedule: unknown; nextFireAt: string | null } }>(
      t.app.url,
      `mutation($id: ID!) { updateDag(id: $id, input: { clearSchedule: true }) { schedule { kind } nextFireAt } }`,
      { id },
      t.admin,
    );
    expect(cleared.updateDag).toEqual({ schedule: null, nextFireAt: null });
    expect(await t.app.services.mongo.c.jobs.findOne({ _id: id })).toBeNull();
    await pause(1_200); // a fire already being made when the timer went may still land
    const count = (await dagRuns(id)).length;
    // A schedule given again (none of its slots comes during the test) makes a new timer, whose
    // lock does not name the held DAG run: it still starts after the one it waits for.
    const again = await gqlOk<{ updateDag: { nextFireAt: string | null } }>(t.app.url, `mutation($id: ID!) { updateDag(id: $id, input: { schedule: { kind: CRON, cron: "0 0 1 1 *" } }) { nextFireAt } }`, { id }, t.admin);
    expect(again.updateDag.nextFireAt).not.toBeNull();
    expect((await dagRun(first.id)).status).toBe("RUNNING");

    // In flight: the first DAG run runs on, its waiting retry included; the held one starts after it.
    const firstDone = await waitFor(async () => {
      const x = await dagRun(first.id);
      return x.status !== "RUNNING" ? x : null;
    }, 20_000);
    expect(firstDone.status).toBe("SUCCEEDED");
    expect(firstDone.tasks.find((t) => t.key === "flaky")).toMatchObject({ status: "SUCCEEDED", run: { status: "SUCCEEDED" } });
    const heldDone = await waitFor(async () => {
      const x = await dagRun(held.id);
      return x.status !== "RUNNING" ? x : null;
    }, 20_000);
    expect(heldDone.status).toBe("SUCCEEDED");
    expect(started(heldDone)).toBeGreaterThanOrEqual(ended(firstDone));
    // No more fires.
    await pause(1_500);
    expect((await dagRuns(id)).length).toBe(count);
  });
});
