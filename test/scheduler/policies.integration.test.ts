/**
 * Misfire and overlap policies on real runs in dev mode: the scheduler is stopped to make fires
 * late (misfire), and jobs whose runs outlast their interval show each overlap policy. Every slot
 * has one outcome in the fire ledger.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { gqlOk, login, waitFor } from "../helpers/graphql.js";

let app: TestApp;
let token: string;

beforeAll(async () => {
  // A short late tolerance, so a 3 s outage of an every-second job is a misfire (default: 60 s);
  // no stage-ahead, or the slots of the outage would have had their runs before it.
  app = await startTestApp({ scheduler: { lateToleranceMs: 500, stageAheadMs: 0 } });
  token = await login(app.url, ADMIN.username, ADMIN.password);
});
afterAll(async () => {
  await app?.dispose();
});

interface Fire { slotAt: string; outcome: string; runId: string | null; reason: string | null }
interface RunRow { id: string; status: string; scheduledFor: string; trigger: string; startedAt: string | null; finishedAt: string | null }

async function createJob(input: Record<string, unknown>): Promise<string> {
  const d = await gqlOk<{ createJob: { id: string } }>(app.url, `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`, { input }, token);
  return d.createJob.id;
}

async function fires(id: string): Promise<Fire[]> {
  const d = await gqlOk<{ job: { fires: { edges: Array<{ node: Fire }> } } }>(
    app.url,
    `query($id: ID!) { job(id: $id) { fires(first: 100) { edges { node { slotAt outcome runId reason } } } } }`,
    { id },
    token,
  );
  return d.job.fires.edges.map((e) => e.node).reverse();
}

async function runs(id: string): Promise<RunRow[]> {
  const d = await gqlOk<{ runs: { edges: Array<{ node: RunRow }> } }>(
    app.url,
    `query($id: ID!) { runs(jobId: $id, first: 100) { edges { node { id status scheduledFor trigger startedAt finishedAt } } } }`,
    { id },
    token,
  );
  return d.runs.edges.map((e) => e.node).reverse();
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("misfire policies after scheduler downtime", () => {
  it("FIRE_ONCE runs one catch-up run, FIRE_ALL every missed slot, SKIP only the latest on-time one", async () => {
    const ids: Record<string, string> = {};
    for (const policy of ["FIRE_ONCE", "FIRE_ALL", "SKIP"]) {
      ids[policy] = await createJob({
        name: `misfire-${policy}`,
        misfire: policy,
        schedule: { kind: "CRON", cron: "* * * * * *" },
        spec: { kind: "COMMAND", command: "true" },
      });
    }
    await pause(1_500);
    await app.scheduler!.stop();
    const downAt = Date.now();
    await pause(3_200);
    const upAt = Date.now();
    await app.scheduler!.start();
    await pause(1_500);
    for (const id of Object.values(ids)) await gqlOk(app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id }, token);

    for (const [policy, id] of Object.entries(ids)) {
      const f = await fires(id);
      // Slots strictly increasing, one second apart, each with exactly one outcome: nothing dropped.
      const times = f.map((x) => Date.parse(x.slotAt));
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!, policy).toBe(1_000);
      const down = f.filter((x) => Date.parse(x.slotAt) > downAt && Date.parse(x.slotAt) < upAt - 1_000);
      expect(down.length, policy).toBeGreaterThanOrEqual(2);
      if (policy === "FIRE_ALL") {
        expect(down.every((x) => x.outcome === "FIRED"), policy).toBe(true);
      } else {
        expect(down.filter((x) => x.outcome === "MISSED").length, policy).toBeGreaterThanOrEqual(2);
        expect(down.filter((x) => x.outcome === "MISSED").every((x) => x.reason && x.reason.length > 0)).toBe(true);
      }
      // Every FIRED slot has its run, and every run of the job is a FIRED slot.
      const r = await runs(id);
      const firedRunIds = f.filter((x) => x.outcome === "FIRED").map((x) => x.runId);
      expect(new Set(r.map((x) => x.id))).toEqual(new Set(firedRunIds));
    }
  });
});

describe("overlap policies with runs longer than the interval", () => {
  it("ALLOW overlaps, FORBID skips, QUEUE_ONE holds one, REPLACE cancels the active run", async () => {
    const ids: Record<string, string> = {};
    for (const overlap of ["ALLOW", "FORBID", "QUEUE_ONE", "REPLACE"]) {
      ids[overlap] = await createJob({
        name: `overlap-${overlap}`,
        overlap,
        schedule: { kind: "CRON", cron: "* * * * * *" },
        spec: { kind: "COMMAND", command: "sleep 2.5" },
      });
    }
    await pause(4_500);
    for (const id of Object.values(ids)) await gqlOk(app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id }, token);
    // Let what is running finish (REPLACE's last run, FORBID's, QUEUE_ONE's pending one).
    await waitFor(async () => {
      for (const id of Object.values(ids)) {
        if ((await runs(id)).some((r) => ["QUEUED", "RUNNING", "PENDING"].includes(r.status))) return false;
      }
      return true;
    }, 15_000, 200);

    const allow = await runs(ids.ALLOW!);
    const overlapping = allow.some((a, i) =>
      allow.some((b, j) => i !== j && a.startedAt && b.startedAt && a.finishedAt && Date.parse(b.startedAt) > Date.parse(a.startedAt) && Date.parse(b.startedAt) < Date.parse(a.finishedAt)),
    );
    expect(overlapping).toBe(true);
    expect((await fires(ids.ALLOW!)).every((f) => f.outcome === "FIRED")).toBe(true);

    const forbid = await runs(ids.FORBID!);
    const forbidFires = await fires(ids.FORBID!);
    expect(forbidFires.some((f) => f.outcome === "SKIPPED_OVERLAP")).toBe(true);
    expect(forbidFires.filter((f) => f.outcome === "SKIPPED_OVERLAP").every((f) => /still active/.test(f.reason ?? ""))).toBe(true);
    for (let i = 1; i < forbid.length; i++) {
      expect(Date.parse(forbid[i]!.startedAt!)).toBeGreaterThanOrEqual(Date.parse(forbid[i - 1]!.finishedAt!));
    }

    const queued = await runs(ids.QUEUE_ONE!);
    expect(queued.every((r) => r.status === "SUCCEEDED")).toBe(true);
    expect(queued.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < queued.length; i++) {
      expect(Date.parse(queued[i]!.startedAt!)).toBeGreaterThanOrEqual(Date.parse(queued[i - 1]!.finishedAt!));
    }
    const queueOneSkips = (await fires(ids.QUEUE_ONE!)).filter((f) => f.outcome === "SKIPPED_OVERLAP");
    expect(queueOneSkips.length).toBeGreaterThan(0);
    // The reason names the waiting run (it once read "run null is still active" when the lock was between holders).
    for (const f of queueOneSkips) expect(f.reason).toMatch(/^(run \S+ is still active and )?run \S+ already waits for the lock \(overlap policy QUEUE_ONE\)$/);
    for (const f of queueOneSkips) expect(f.reason).not.toMatch(/\bnull\b/);

    const replaced = await runs(ids.REPLACE!);
    expect(replaced.filter((r) => r.status === "CANCELLED").length).toBeGreaterThanOrEqual(2);
    expect(replaced.at(-1)!.status).toBe("SUCCEEDED");
  });
});
