/**
 * A manual trigger of a scheduled DAG (triggerDag) under the DAG's overlap policy, over the real
 * API (docs/dags.md, "Schedules"), as triggerJob runs under its job's: FORBID refuses a trigger
 * while a DAG run holds the lock (FAILED_PRECONDITION naming it and the policy), QUEUE_ONE holds one DAG run
 * behind it and refuses the next, REPLACE cancels the holder. An idempotencyKey repeat answers the
 * same DAG run and takes no second lock; a DAG without a schedule has no lock. A retried DAG run
 * a trigger made takes the lock again, like a fire's.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { code, message } from "../helpers/accounts.js";
import { gql, gqlOk, waitFor } from "../helpers/graphql.js";
import { tasksInput, type TaskSpec, tasksPage, listTasks, type AsRead } from "./helpers.js";

const t = useTestApp({ scheduler: { lateToleranceMs: 500, stageAheadMs: 0 } });

interface DagRunRow { id: string; status: string; held: boolean; trigger: string; finishedAt: string | null; tasks: Array<{ key: string; status: string; attempt: number; run: { startedAt: string | null } | null }> }

const DAG_RUN = `id status held trigger finishedAt ${tasksPage(5, "key status attempt run { startedAt }")}`;
/** A schedule none of whose slots comes during the test: the DAG has its timer job, and so its lock. */
const YEARLY = { kind: "CRON", cron: "0 0 1 1 *" };
const SLOW: TaskSpec[] = [{ key: "slow", command: "sleep 2.5" }];

async function createDag(name: string, tasks: TaskSpec[], extra: Record<string, unknown>): Promise<string> {
  const d = await gqlOk<{ createDag: { id: string } }>(t.app.url, `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`, { input: { name, tasks: tasksInput(tasks), ...extra } }, t.admin);
  return d.createDag.id;
}

const trigger = (id: string, opts: { params?: Record<string, unknown>; key?: string } = {}) =>
  gql(t.app.url, `mutation($id: ID!, $params: JSONObject, $key: String) { triggerDag(id: $id, params: $params, idempotencyKey: $key) { ${DAG_RUN} } }`, { id, params: opts.params, key: opts.key }, t.admin);

async function triggered(id: string, opts: { params?: Record<string, unknown>; key?: string } = {}): Promise<DagRunRow> {
  const r = await trigger(id, opts);
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return listTasks<DagRunRow>((r.data as { triggerDag: AsRead<DagRunRow> }).triggerDag);
}

async function dagRun(id: string): Promise<DagRunRow> {
  return listTasks<DagRunRow>((await gqlOk<{ dagRun: AsRead<DagRunRow> }>(t.app.url, `query($id: ID!) { dagRun(id: $id) { ${DAG_RUN} } }`, { id }, t.admin)).dagRun);
}

async function dagRunIds(dagId: string): Promise<string[]> {
  const d = await gqlOk<{ dagRuns: { edges: Array<{ node: { id: string } }> } }>(t.app.url, `query($id: ID!) { dagRuns(dagId: $id, first: 30) { edges { node { id } } } }`, { id: dagId }, t.admin);
  return d.dagRuns.edges.map((e) => e.node.id).sort();
}

const ended = (id: string, ms = 20_000) =>
  waitFor(async () => {
    const x = await dagRun(id);
    return x.status !== "RUNNING" ? x : null;
  }, ms);
const running = (id: string) => waitFor(async () => ((await dagRun(id)).tasks[0]!.status === "RUNNING" ? true : null), 10_000, 50);
const startedAt = (r: DagRunRow) => Date.parse(r.tasks[0]!.run!.startedAt!);
const lockOf = async (dagId: string) => {
  const j = await t.app.services.mongo.c.jobs.findOne({ _id: dagId });
  return { active: j?.activeRunId ?? null, pending: j?.pendingRunId ?? null };
};

describe("triggerDag takes the DAG's overlap lock, as triggerJob takes its job's", () => {
  it("FORBID: a trigger while a DAG run holds the lock is FAILED_PRECONDITION naming that DAG run and the policy, and makes no DAG run; once it ended, a trigger runs", async () => {
    const id = await createDag("trigger-forbid", SLOW, { overlap: "FORBID", schedule: YEARLY });
    const a = await triggered(id);
    expect(a).toMatchObject({ status: "RUNNING", held: false, trigger: "MANUAL" });
    expect(await lockOf(id)).toEqual({ active: a.id, pending: null });

    const refused = await trigger(id);
    expect(code(refused)).toBe("FAILED_PRECONDITION");
    expect(message(refused)).toBe(
      `not triggered: DAG ${id}'s overlap policy is FORBID and DAG run ${a.id} holds the lock; trigger it once that DAG run has ended (or cancel it)`,
    );
    expect(await dagRunIds(id)).toEqual([a.id]);

    expect((await ended(a.id)).status).toBe("SUCCEEDED");
    expect(await lockOf(id)).toEqual({ active: null, pending: null });
    const b = await triggered(id);
    expect(await lockOf(id)).toEqual({ active: b.id, pending: null });
    expect((await ended(b.id)).status).toBe("SUCCEEDED");
    expect(await lockOf(id)).toEqual({ active: null, pending: null });
  });

  it("FORBID with an idempotencyKey: the repeat answers the same DAG run, takes no second lock and is not refused", async () => {
    const id = await createDag("trigger-idempotent", SLOW, { overlap: "FORBID", schedule: YEARLY });
    const a = await triggered(id, { key: "nightly-2026-11-26" });
    const again = await triggered(id, { key: "nightly-2026-11-26" });
    expect(again.id).toBe(a.id);
    expect(await lockOf(id)).toEqual({ active: a.id, pending: null });
    expect(await dagRunIds(id)).toEqual([a.id]);
    // Another key is another trigger: refused while the first holds the lock.
    expect(code(await trigger(id, { key: "nightly-2026-11-27" }))).toBe("FAILED_PRECONDITION");
    expect((await ended(a.id)).status).toBe("SUCCEEDED");
    expect(await lockOf(id)).toEqual({ active: null, pending: null });
  });

  it("QUEUE_ONE: the second trigger waits held and starts when the first ends; a third while it waits is FAILED_PRECONDITION", async () => {
    const id = await createDag("trigger-queue-one", SLOW, { overlap: "QUEUE_ONE", schedule: YEARLY });
    const a = await triggered(id);
    const b = await triggered(id);
    expect(b).toMatchObject({ status: "RUNNING", held: true });
    expect(b.tasks[0]!.status).toBe("PENDING");
    expect(await lockOf(id)).toEqual({ active: a.id, pending: b.id });

    const refused = await trigger(id);
    expect(code(refused)).toBe("FAILED_PRECONDITION");
    expect(message(refused)).toContain(`overlap policy is QUEUE_ONE and DAG run ${b.id} is already waiting for the lock behind DAG run ${a.id}`);
    expect(await dagRunIds(id)).toEqual([a.id, b.id].sort());

    const doneA = await ended(a.id);
    const doneB = await ended(b.id);
    expect([doneA.status, doneB.status]).toEqual(["SUCCEEDED", "SUCCEEDED"]);
    expect(startedAt(doneB)).toBeGreaterThanOrEqual(Date.parse(doneA.finishedAt!));
    expect(await lockOf(id)).toEqual({ active: null, pending: null });
  });

  it("REPLACE: a trigger cancels the DAG run holding the lock and runs in its place", async () => {
    const id = await createDag("trigger-replace", [...SLOW, { key: "after", command: "true", dependsOn: ["slow"] }], { overlap: "REPLACE", schedule: YEARLY });
    const a = await triggered(id);
    await running(a.id);
    const b = await triggered(id);
    expect(b.held).toBe(false);
    expect(await lockOf(id)).toEqual({ active: b.id, pending: null });
    const doneA = await ended(a.id);
    expect(doneA.status).toBe("CANCELLED");
    expect(doneA.tasks.find((t) => t.key === "after")!.status).toBe("CANCELLED");
    expect((await ended(b.id)).status).toBe("SUCCEEDED");
    expect(await lockOf(id)).toEqual({ active: null, pending: null });
  });

  it("a DAG without a schedule has no lock: its overlap policy applies once it has one", async () => {
    const id = await createDag("trigger-no-schedule", SLOW, { overlap: "FORBID" });
    const a = await triggered(id);
    const b = await triggered(id);
    await running(a.id);
    await running(b.id);
    expect((await ended(a.id)).status).toBe("SUCCEEDED");
    expect((await ended(b.id)).status).toBe("SUCCEEDED");
  });
});

describe("retryDagRun of a DAG run a trigger made takes the lock again", () => {
  it("FORBID: refused while another DAG run holds the lock (the failed one untouched); once free, the retry runs holding the lock", async () => {
    const command =
      `mode=$(sed -n 's/.*"mode":"\\([a-z]*\\)".*/\\1/p' "$KAIROS_PARAMS"); ` + `if [ "$mode" = fail ] && [ "$KAIROS_TASK_ATTEMPT" = 1 ]; then exit 1; fi; sleep 2.5`;
    const id = await createDag("trigger-retry-forbid", [{ key: "work", command }], { overlap: "FORBID", schedule: YEARLY });
    const a = await triggered(id, { params: { mode: "fail" } });
    expect((await ended(a.id)).status).toBe("FAILED");
    const b = await triggered(id, { params: { mode: "slow" } });
    expect(await lockOf(id)).toEqual({ active: b.id, pending: null });

    const refused = await gql(t.app.url, `mutation($id: ID!) { retryDagRun(id: $id) { id } }`, { id: a.id }, t.admin);
    expect(code(refused)).toBe("FAILED_PRECONDITION");
    expect(message(refused)).toContain(`overlap policy is FORBID and DAG run ${b.id} holds the lock`);
    expect((await dagRun(a.id)).status).toBe("FAILED");

    expect((await ended(b.id)).status).toBe("SUCCEEDED");
    await gqlOk(t.app.url, `mutation($id: ID!) { retryDagRun(id: $id) { id } }`, { id: a.id }, t.admin);
    expect(await lockOf(id)).toEqual({ active: a.id, pending: null });
    expect(code(await trigger(id))).toBe("FAILED_PRECONDITION");
    expect((await ended(a.id)).status).toBe("SUCCEEDED");
    expect(await lockOf(id)).toEqual({ active: null, pending: null });
  });
});
