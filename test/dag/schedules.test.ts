/**
 * Scheduled DAGs fire through the job scheduling machinery (docs/dags.md, "Schedules"): a misfire
 * after scheduler downtime is handled by the DAG's misfire policy, every slot has one outcome in
 * the DAG's fire ledger and every FIRED slot has its DAG run; FORBID keeps DAG runs from
 * overlapping; pause stops the schedule; backfill fills past slots once.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { gql, gqlOk, waitFor } from "../helpers/graphql.js";
import { code } from "../helpers/accounts.js";
import { tasksInput } from "./helpers.js";

const t = useTestApp({ scheduler: { lateToleranceMs: 500, stageAheadMs: 0 } });

interface Fire { slotAt: string; outcome: string; runId: string | null; reason: string | null }
interface DagRunRow { id: string; status: string; trigger: string; scheduledFor: string; createdAt: string; finishedAt: string | null }

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function createDag(input: Record<string, unknown>): Promise<string> {
  const d = await gqlOk<{ createDag: { id: string } }>(t.app.url, `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`, { input }, t.admin);
  return d.createDag.id;
}

async function fires(id: string): Promise<Fire[]> {
  const d = await gqlOk<{ dag: { fires: { edges: Array<{ node: Fire }> } } }>(t.app.url, `query($id: ID!) { dag(id: $id) { fires(first: 100) { edges { node { slotAt outcome runId reason } } } } }`, { id }, t.admin);
  return d.dag.fires.edges.map((e) => e.node).reverse();
}

async function dagRuns(id: string): Promise<DagRunRow[]> {
  const d = await gqlOk<{ dagRuns: { edges: Array<{ node: DagRunRow }> } }>(
    t.app.url,
    `query($id: ID!) { dagRuns(dagId: $id, first: 100) { edges { node { id status trigger scheduledFor createdAt finishedAt } } } }`,
    { id },
    t.admin,
  );
  return d.dagRuns.edges.map((e) => e.node).reverse();
}

describe("scheduled DAGs", () => {
  it("fires every second; a misfire after downtime runs one catch-up DAG run (FIRE_ONCE), the rest MISSED in the ledger", async () => {
    const id = await createDag({ name: "every-second", misfire: "FIRE_ONCE", schedule: { kind: "CRON", cron: "* * * * * *" }, tasks: tasksInput([{ key: "a", command: "true" }, { key: "b", command: "true", dependsOn: ["a"] }]) });
    const dag = await gqlOk<{ dag: { nextFireAt: string | null; schedule: { cron: string } } }>(t.app.url, `query($id: ID!) { dag(id: $id) { nextFireAt schedule { cron } } }`, { id }, t.admin);
    expect(dag.dag.schedule.cron).toBe("* * * * * *");
    expect(dag.dag.nextFireAt).not.toBeNull();
    // The timer job is not a job users see.
    expect(code(await gql(t.app.url, `query($id: ID!) { job(id: $id) { id } }`, { id }, t.admin))).toBe("NOT_FOUND");
    const jobs = await gqlOk<{ jobs: { edges: Array<{ node: { id: string } }> } }>(t.app.url, `{ jobs(first: 100) { edges { node { id } } } }`, {}, t.admin);
    expect(jobs.jobs.edges.map((e) => e.node.id)).not.toContain(id);

    await pause(1_500);
    await t.app.scheduler!.stop();
    const downAt = Date.now();
    await pause(3_200);
    const upAt = Date.now();
    await t.app.scheduler!.start();
    await pause(1_500);
    await gqlOk(t.app.url, `mutation($id: ID!) { pauseDag(id: $id) { id paused } }`, { id }, t.admin);
    await waitFor(async () => (await dagRuns(id)).every((r) => r.status !== "RUNNING"), 20_000);

    const f = await fires(id);
    const times = f.map((x) => Date.parse(x.slotAt));
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(1_000);
    const down = f.filter((x) => Date.parse(x.slotAt) > downAt && Date.parse(x.slotAt) < upAt - 1_000);
    expect(down.length).toBeGreaterThanOrEqual(2);
    expect(down.filter((x) => x.outcome === "MISSED").length).toBeGreaterThanOrEqual(2);
    // Every FIRED slot has its DAG run (the ledger's runId), every DAG run of the DAG is a FIRED slot, and each succeeded.
    const runs = await dagRuns(id);
    expect(new Set(runs.map((r) => r.id))).toEqual(new Set(f.filter((x) => x.outcome === "FIRED").map((x) => x.runId)));
    expect(runs.every((r) => r.trigger === "SCHEDULE" && r.status === "SUCCEEDED")).toBe(true);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    // Paused: no more fires.
    const n = (await fires(id)).length;
    await pause(1_500);
    expect((await fires(id)).length).toBe(n);
  });

  it("FORBID: a DAG run still running makes the next slots SKIPPED_OVERLAP; backfill fills past slots once", async () => {
    const id = await createDag({ name: "forbid", overlap: "FORBID", schedule: { kind: "CRON", cron: "* * * * * *" }, tasks: tasksInput([{ key: "slow", command: "sleep 2.5" }]) });
    await pause(4_500);
    await gqlOk(t.app.url, `mutation($id: ID!) { pauseDag(id: $id) { id } }`, { id }, t.admin);
    await waitFor(async () => (await dagRuns(id)).every((r) => r.status !== "RUNNING"), 20_000);
    const f = await fires(id);
    expect(f.filter((x) => x.outcome === "SKIPPED_OVERLAP").length).toBeGreaterThanOrEqual(1);
    // Never two DAG runs at once.
    const runs = (await dagRuns(id)).map((r) => [Date.parse(r.createdAt), Date.parse(r.finishedAt!)] as const).sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < runs.length; i++) expect(runs[i]![0]).toBeGreaterThanOrEqual(runs[i - 1]![1]);

    const from = new Date(Date.parse(f[0]!.slotAt)).toISOString();
    const to = new Date(Date.parse(f[0]!.slotAt) + 2_000).toISOString();
    const q = `mutation($id: ID!, $from: DateTime!, $to: DateTime!) { backfillDag(id: $id, from: $from, to: $to) { id trigger } }`;
    const b1 = await gqlOk<{ backfillDag: Array<{ id: string; trigger: string }> }>(t.app.url, q, { id, from, to }, t.admin);
    expect(b1.backfillDag).toHaveLength(3);
    const b2 = await gqlOk<{ backfillDag: Array<{ id: string }> }>(t.app.url, q, { id, from, to }, t.admin);
    expect(b2.backfillDag.map((r) => r.id)).toEqual(b1.backfillDag.map((r) => r.id));
  });
});
