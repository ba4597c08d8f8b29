/**
 * Retries, dead letters, timeouts, priorities, pause/resume and backfill on real runs (dev mode).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { gql, gqlOk, login, waitFor } from "../helpers/graphql.js";

let app: TestApp;
let token: string;

beforeAll(async () => {
  // One slot, so queue order is observable.
  app = await startTestApp({ env: { KAIROS_EXECUTOR_SLOTS: "1" } });
  token = await login(app.url, ADMIN.username, ADMIN.password);
});
afterAll(async () => {
  await app?.dispose();
});

const FAR = "2099-01-01T00:00:00Z";
const RUN = `id status attempt maxAttempts exitCode error trigger scheduledFor startedAt finishedAt retryAt outputTail history { status reason attempt }`;

async function createJob(input: Record<string, unknown>): Promise<string> {
  const d = await gqlOk<{ createJob: { id: string } }>(app.url, `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`, { input }, token);
  return d.createJob.id;
}
async function trigger(id: string): Promise<string> {
  return (await gqlOk<{ triggerJob: { id: string } }>(app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id }, token)).triggerJob.id;
}
async function run(id: string): Promise<Record<string, any>> {
  return (await gqlOk<{ run: Record<string, any> }>(app.url, `query($id: ID!) { run(id: $id) { ${RUN} } }`, { id }, token)).run;
}
async function until(id: string, statuses: string[], ms = 15_000): Promise<Record<string, any>> {
  return waitFor(async () => {
    const r = await run(id);
    return statuses.includes(r.status) ? r : null;
  }, ms, 50);
}

describe("retries and dead letters", () => {
  it("retries with backoff, then dead-letters, and retryRun re-runs it", async () => {
    const id = await createJob({
      name: "flaky",
      schedule: { kind: "ONCE", at: FAR },
      spec: { kind: "COMMAND", command: "echo attempt $KAIROS_ATTEMPT; exit 3" },
      retry: { maxAttempts: 3, backoff: "EXPONENTIAL", initial: "PT0.2S", factor: 2, max: "PT1S", jitter: "NONE" },
    });
    const runId = await trigger(id);
    const dead = await until(runId, ["DEAD"]);
    expect(dead.attempt).toBe(3);
    expect(dead.maxAttempts).toBe(3);
    expect(dead.exitCode).toBe(3);
    expect(dead.outputTail).toBe("attempt 3\n");
    const statuses = dead.history.map((h: { status: string }) => h.status);
    expect(statuses.filter((s: string) => s === "RETRY_SCHEDULED")).toHaveLength(2);
    expect(statuses.at(-1)).toBe("DEAD");

    const letters = await gqlOk<{ deadLetters: { edges: Array<{ node: { id: string } }> } }>(app.url, `{ deadLetters { edges { node { id } } } }`, {}, token);
    expect(letters.deadLetters.edges.map((e) => e.node.id)).toContain(runId);

    await gqlOk(app.url, `mutation($id: ID!) { retryRun(id: $id) { id status } }`, { id: runId }, token);
    const again = await until(runId, ["DEAD", "FAILED"]);
    expect(again.attempt).toBe(4);
    expect(again.outputTail).toBe("attempt 4\n");
  });

  it("does not retry a non-retryable exit code", async () => {
    const id = await createJob({
      name: "fatal",
      schedule: { kind: "ONCE", at: FAR },
      spec: { kind: "COMMAND", command: "exit 42" },
      retry: { maxAttempts: 5, initial: "PT0.1S", nonRetryableExitCodes: [42] },
    });
    const r = await until(await trigger(id), ["FAILED", "DEAD"]);
    expect(r.status).toBe("FAILED");
    expect(r.attempt).toBe(1);
    expect(r.exitCode).toBe(42);
  });

  it("kills a run at its timeout and marks it TIMED_OUT", async () => {
    const id = await createJob({ name: "slow", schedule: { kind: "ONCE", at: FAR }, spec: { kind: "COMMAND", command: "sleep 30", timeout: "PT0.5S" } });
    const r = await until(await trigger(id), ["TIMED_OUT", "FAILED"]);
    expect(r.status).toBe("TIMED_OUT");
    expect(Date.parse(r.finishedAt) - Date.parse(r.startedAt)).toBeLessThan(5_000);
    expect(r.error).toMatch(/timed out/);
  });

  it("cancels a running run", async () => {
    const id = await createJob({ name: "cancel-me", schedule: { kind: "ONCE", at: FAR }, spec: { kind: "COMMAND", command: "sleep 30" } });
    const runId = await trigger(id);
    await until(runId, ["RUNNING"]);
    await gqlOk(app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: runId }, token);
    const r = await until(runId, ["CANCELLED"]);
    expect(Date.parse(r.finishedAt) - Date.parse(r.startedAt)).toBeLessThan(10_000);
  });
});

describe("priorities", () => {
  it("starts higher priority runs first, equal priority in order", async () => {
    // The one slot is held until every run is queued (cancelled then, not a sleep that a loaded host outlasts).
    const blocker = await createJob({ name: "blocker", schedule: { kind: "ONCE", at: FAR }, spec: { kind: "COMMAND", command: "sleep 60" } });
    const jobs: Array<[string, number]> = [["p1-a", 1], ["p9", 9], ["p1-b", 1], ["p5", 5]];
    const ids = new Map<string, string>();
    for (const [name, priority] of jobs) {
      ids.set(name, await createJob({ name, priority, schedule: { kind: "ONCE", at: FAR }, spec: { kind: "COMMAND", command: "true" } }));
    }
    const blockRun = await trigger(blocker);
    await until(blockRun, ["RUNNING"]);
    const runIds = new Map<string, string>();
    for (const [name] of jobs) runIds.set(name, await trigger(ids.get(name)!));
    for (const rid of runIds.values()) expect((await run(rid)).status).toBe("QUEUED");
    await gqlOk(app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: blockRun }, token);
    const done = await Promise.all([...runIds.entries()].map(async ([name, rid]) => [name, await until(rid, ["SUCCEEDED"])] as const));
    const order = done.sort((a, b) => Date.parse(a[1].startedAt) - Date.parse(b[1].startedAt)).map(([n]) => n);
    expect(order).toEqual(["p9", "p5", "p1-a", "p1-b"]);
  });
});

describe("pause, resume and backfill", () => {
  it("records slots that fell while paused as SKIPPED_PAUSED and backfills a past range once", async () => {
    const id = await createJob({ name: "paused", schedule: { kind: "CRON", cron: "* * * * * *" }, spec: { kind: "COMMAND", command: "true" } });
    await gqlOk(app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id }, token);
    const pausedAt = Date.now();
    await new Promise((r) => setTimeout(r, 2_300));
    await gqlOk(app.url, `mutation($id: ID!) { resumeJob(id: $id) { id } }`, { id }, token);
    await gqlOk(app.url, `mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id }, token);
    const fires = await gqlOk<{ job: { fires: { edges: Array<{ node: { slotAt: string; outcome: string } }> } } }>(
      app.url, `query($id: ID!) { job(id: $id) { fires(first: 100) { edges { node { slotAt outcome } } } } }`, { id }, token);
    const skipped = fires.job.fires.edges.filter((e) => e.node.outcome === "SKIPPED_PAUSED" && Date.parse(e.node.slotAt) > pausedAt);
    expect(skipped.length).toBeGreaterThanOrEqual(2);

    const from = new Date(Math.ceil(pausedAt / 1000) * 1000).toISOString();
    const to = new Date(Math.ceil(pausedAt / 1000) * 1000 + 1_000).toISOString();
    const BACKFILL = `mutation($id: ID!, $from: DateTime!, $to: DateTime!) { backfillJob(id: $id, from: $from, to: $to) { requested existing runs { id trigger scheduledFor } } }`;
    const b1 = await gqlOk<{ backfillJob: { requested: number; existing: number; runs: Array<{ id: string; trigger: string; scheduledFor: string }> } }>(app.url, BACKFILL, { id, from, to }, token);
    expect(b1.backfillJob.requested).toBe(2);
    expect(b1.backfillJob.runs.map((r) => r.scheduledFor)).toEqual([from, to]);
    expect(b1.backfillJob.runs.every((r) => r.trigger === "BACKFILL")).toBe(true);
    const b2 = await gqlOk<typeof b1>(app.url, BACKFILL, { id, from, to }, token);
    expect(b2.backfillJob).toMatchObject({ requested: 2, existing: 2, runs: [] });
    for (const r of b1.backfillJob.runs) await until(r.id, ["SUCCEEDED"]);

    const future = await gql(app.url, BACKFILL, { id, from, to: new Date(Date.now() + 60_000).toISOString() }, token);
    expect(future.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    const before = await gql(app.url, BACKFILL, { id, from: "2026-01-01T00:00:00Z", to: "2026-01-01T00:01:00Z" }, token);
    expect(before.errors?.[0]?.message).toMatch(/no slot of the schedule/);
    const old = await createJob({
      name: "old",
      schedule: { kind: "CRON", cron: "* * * * * *", startAt: "2026-01-01T00:00:00Z" },
      spec: { kind: "COMMAND", command: "true" },
      paused: true,
    });
    const huge = await gql(app.url, BACKFILL, { id: old, from: "2026-01-01T00:00:00Z", to: "2026-01-02T00:00:00Z" }, token);
    expect(huge.errors?.[0]?.message).toMatch(/more than 1000 slots/);
    const ok = await gqlOk<typeof b1>(app.url, BACKFILL, { id: old, from: "2026-01-01T00:00:00Z", to: "2026-01-01T00:00:02Z" }, token);
    expect(ok.backfillJob.runs.map((r) => r.scheduledFor)).toEqual(["2026-01-01T00:00:00.000Z", "2026-01-01T00:00:01.000Z", "2026-01-01T00:00:02.000Z"]);
  });
});

describe("metrics", () => {
  it("exposes fire outcomes, lateness, finished runs, queue depth and nodes in Prometheus format", async () => {
    const res = await fetch(app.url.replace("/graphql", "/metrics"));
    expect(res.headers.get("content-type")).toMatch(/text\/plain/);
    const text = await res.text();
    const value = (re: RegExp) => Number(re.exec(text)?.[1] ?? NaN);
    expect(value(/^kairos_fires_total\{outcome="SKIPPED_PAUSED"\} (\d+)$/m)).toBeGreaterThanOrEqual(2);
    expect(value(/^kairos_runs_finished_total\{status="DEAD"\} (\d+)$/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^kairos_runs_finished_total\{status="TIMED_OUT"\} (\d+)$/m)).toBe(1);
    expect(value(/^kairos_fire_lateness_seconds_count (\d+)$/m)).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^kairos_queue_depth\{pool="default"\} \d+$/m);
    expect(value(/^kairos_nodes\{status="ONLINE"\} (\d+)$/m)).toBe(1);
    expect(text).toMatch(/^# TYPE kairos_claim_latency_seconds histogram$/m);
  });
});
