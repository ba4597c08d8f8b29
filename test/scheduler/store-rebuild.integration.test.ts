/**
 * Redis loses its data under a running cluster (issue #14): the schedulers notice within a second
 * or two (the store's generation changes) and rebuild the wheel and the ready queues from MongoDB
 * at once. On its own redis-server (FLUSHALL and a restart would wipe every other test file's keys
 * on the shared one): the whole product in-process (API, scheduler, executor with 4 slots, lease
 * 5 s) plus a second scheduler, real clocks.
 *
 * Before the loss: 4 runs fill the executor's slots (until the test lets them end, right after the
 * loss), 12 runs wait QUEUED behind them (6 of priority 8, 6 of priority 2), one run is staged for
 * 6 s later, one one-off's timer is armed 7 s later, an every-2-s job keeps firing, and two runs of a pool no executor serves were taken by a
 * simulated executor that has not confirmed them yet. Then the data goes, and:
 * - the loss is noticed within 2 s;
 * - every QUEUED run starts within the grace (3 s with this lease) + 5 s of the loss, best priority
 *   first (without the rebuild they waited for the reaper: ≥ 15 s, its 10 s age check plus the
 *   lease);
 * - the staged run and the armed timers start at most 3 s late;
 * - every run started exactly once (each run's command appends its id to a file);
 * - a taker that confirms within the grace keeps its run (not pushed again), one that confirms
 *   after it is refused (its token was bumped), and the run is back in its queue.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/tokens.js";
import { decodeRunPayload } from "../../src/core/events.js";
import type { JobDoc, RunDoc } from "../../src/domain/documents.js";
import { Scheduler } from "../../src/scheduler/loop.js";
import { shardOf } from "../../src/shared-state/ports.js";
import { rebuildGraceMs, STORE_REBUILT_REASON } from "../../src/scheduler/store-watch.js";
import { registry } from "../../src/support/metrics.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { waitFor } from "../helpers/graphql.js";
import { startRedis, type PrivateRedis } from "../support/local-redis.js";

const LEASE_MS = 5_000; // the test app's KAIROS_LEASE
const GRACE_MS = rebuildGraceMs(LEASE_MS);
/** Noticed: a check every 500 ms, plus a loaded machine. */
const DETECT_BOUND_MS = 2_000;
/** A QUEUED run starts this soon after the loss at the latest: detection, the grace, a take, and margin for 2 busy cores. */
const START_BOUND_MS = GRACE_MS + 5_000;
/** A staged run or an armed timer due after the loss starts at most this late. */
const LATE_BOUND_MS = 3_000;
const caller: Principal = { userId: "000000000000000000000114", username: "flush", role: "ADMIN" };

let redis: PrivateRedis;
let app: TestApp;
let second: Scheduler;
let dir: string;
/** The warnings both schedulers logged, with their time. */
const warnings: Array<{ msg: string; time: number }> = [];

beforeAll(async () => {
  redis = await startRedis();
  dir = await mkdtemp(join(tmpdir(), "kairos-flush-"));
  const log = pino({ level: "warn" }, { write: (line: string) => void warnings.push(JSON.parse(line) as { msg: string; time: number }) });
  app = await startTestApp({ redisUrl: redis.url, log, env: { KAIROS_SANDBOX: "none", KAIROS_EXECUTOR_SLOTS: "4", KAIROS_LEASE: "PT5S" } });
  const { mongo, state, runs } = app.services;
  second = new Scheduler(
    { mongo, state, runs, clock: Date.now, log },
    { memberId: "second", heartbeatMs: 200, maxSleepMs: 200, reaperMs: 500, shardLeaseMs: app.config.shardLeaseMs, stageAheadMs: app.config.stageAheadMs, claimGraceMs: LEASE_MS },
  );
  await second.start();
}, 60_000);

afterAll(async () => {
  await second?.stop();
  await app?.dispose();
  await redis?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The command of every run here: it notes its run id (one line per start). */
const note = (extra = "") => `echo "$KAIROS_RUN_ID" >> ${join(dir, "starts")}${extra}`;

async function job(name: string, input: Partial<Parameters<TestApp["services"]["jobs"]["create"]>[1]> & { schedule: JobDoc["schedule"] | object }): Promise<JobDoc> {
  return app.services.jobs.create(caller, { name, spec: { kind: "COMMAND", command: note() }, ...input } as Parameters<TestApp["services"]["jobs"]["create"]>[1]);
}

const runsOf = (jobId: string) => app.services.mongo.c.runs.find({ jobId }).sort({ scheduledFor: 1 }).toArray();
const rebuilt = (r: RunDoc) => r.history.some((h) => h.reason === STORE_REBUILT_REASON);

async function allDone(jobIds: string[], count: number): Promise<RunDoc[]> {
  return waitFor(async () => {
    const all = (await Promise.all(jobIds.map(runsOf))).flat();
    return all.length >= count && all.every((r) => r.status === "SUCCEEDED") ? all : null;
  }, 40_000, 100);
}

/** Builds the state described above, loses the store with `lose`, and checks the recovery. */
async function lossScenario(tag: string, lose: () => Promise<void>): Promise<{ detectedInMs: number; slowestStartMs: number; stagedLateMs: number; timerLateMs: number }> {
  const { services } = app;
  const far = Date.now() + 3_600_000;
  // The blockers hold the 4 slots until the test lets them go, right after the loss.
  const go = join(dir, `go-${tag}`);
  const blocker = await job(`${tag}-blocker`, { schedule: { kind: "ONCE", at: far }, spec: { kind: "COMMAND", command: note(`; while [ ! -f ${go} ]; do sleep 0.05; done`) } });
  const blockers: string[] = [];
  for (let i = 0; i < 4; i++) blockers.push((await services.jobs.trigger(caller, blocker._id))._id);
  await waitFor(async () => ((await services.mongo.c.runs.countDocuments({ _id: { $in: blockers }, status: "RUNNING" })) === 4 ? true : null), 15_000);

  const high = await job(`${tag}-high`, { schedule: { kind: "ONCE", at: far }, priority: 8 });
  // Each scheduler rebuilds the queues of its own shards, in priority-then-age order; across two
  // schedulers the pushes land up to a check interval apart. The order is asserted where it is
  // promised: the low job is made in the high job's shard (a few tries of a random id).
  const shardOfJob = (id: string) => shardOf(id, services.state.wheel.shardCount);
  let low = await job(`${tag}-low`, { schedule: { kind: "ONCE", at: far }, priority: 2 });
  for (let i = 0; shardOfJob(low._id) !== shardOfJob(high._id); i++) {
    if (i > 2_000) throw new Error("no job id landed in the high job's shard");
    await services.jobs.delete(caller, low._id);
    low = await job(`${tag}-low`, { schedule: { kind: "ONCE", at: far }, priority: 2 });
  }
  for (let i = 0; i < 6; i++) await services.jobs.trigger(caller, low._id);
  for (let i = 0; i < 6; i++) await services.jobs.trigger(caller, high._id);
  const lossAt0 = Date.now();
  const staged = await job(`${tag}-staged`, { schedule: { kind: "ONCE", at: lossAt0 + 6_000 }, overlap: "ALLOW", priority: 9 });
  const timer = await job(`${tag}-timer`, { schedule: { kind: "ONCE", at: lossAt0 + 7_000 }, overlap: "FORBID", priority: 9 });
  const every = await job(`${tag}-every`, { schedule: { kind: "INTERVAL", every: "PT2S", startAt: lossAt0 + 1_000 }, overlap: "FORBID", priority: 9 });
  // Two runs of a pool no executor serves, taken by a "taker" that started them and has not confirmed.
  const sim = await job(`${tag}-sim`, { schedule: { kind: "ONCE", at: far }, spec: { kind: "COMMAND", command: "true", pool: `sim-${tag}` } });
  await services.jobs.trigger(caller, sim._id);
  await services.jobs.trigger(caller, sim._id);
  const stagedRun = await waitFor(async () => (await runsOf(staged._id))[0] ?? null, 5_000);
  expect(stagedRun.notBefore!.getTime()).toBeGreaterThan(Date.now() + 2_000);
  await waitFor(async () => ((await services.state.ready.size(`sim-${tag}`)) === 2 ? true : null), 5_000);
  const { taken: took } = await services.state.ready.take(`sim-${tag}`, 2, Date.now(), LEASE_MS);
  expect(took).toHaveLength(2);
  const taken = took.map((t) => decodeRunPayload(t.payload!));
  expect((await services.mongo.c.runs.countDocuments({ jobId: { $in: [high._id, low._id] }, status: "QUEUED" }))).toBe(12);

  const lossAt = Date.now();
  await lose();
  await writeFile(go, "");
  // The first taker confirms within the grace: its run stays its own.
  await new Promise((r) => setTimeout(r, 300));
  const confirmed = await services.runs.confirmClaim(taken[0]!, "taker", LEASE_MS, lossAt);
  expect(confirmed?.status).toBe("RUNNING");

  // The confirmed taker kept its run; the other's late confirm is refused, and its run is queued again.
  const requeued = await waitFor(async () => {
    const r = await services.runs.get(taken[1]!._id);
    return r && rebuilt(r) && (await services.state.ready.contains(`sim-${tag}`, r._id, Date.now())) ? r : null;
  }, 15_000);
  expect(requeued.status).toBe("QUEUED");
  expect(requeued.fencingToken).toBe(taken[1]!.fencingToken + 1);
  expect(await services.runs.confirmClaim(taken[1]!, "taker", LEASE_MS, lossAt)).toBeNull();
  const kept = (await services.runs.get(taken[0]!._id))!;
  expect(rebuilt(kept)).toBe(false); // (its lease, 5 s from the confirm, may have run out since: the reaper's business)
  expect(kept.history.some((h) => h.reason === "claimed" && h.nodeId === "taker")).toBe(true);
  expect(await services.state.ready.contains(`sim-${tag}`, kept._id, Date.now())).toBe(false);

  const queuedRuns = await allDone([high._id, low._id], 12);
  const [stagedDone] = await allDone([staged._id], 1);
  const [timerDone] = await allDone([timer._id], 1);
  await waitFor(async () => ((await runsOf(every._id)).some((r) => r.scheduledFor.getTime() >= lossAt + 9_000 && r.status === "SUCCEEDED") ? true : null), 30_000);

  // Noticed within a second or two.
  const detected = warnings.find((w) => w.msg.startsWith("the shared store lost its data") && w.time >= lossAt);
  expect(detected, "no scheduler noticed the loss").toBeDefined();
  const detectedInMs = detected!.time - lossAt;
  expect(detectedInMs).toBeLessThanOrEqual(DETECT_BOUND_MS);

  // Every QUEUED run went back, started soon, once, best priority first.
  const starts = queuedRuns.map((r) => r.startedAt!.getTime() - lossAt);
  const slowestStartMs = Math.max(...starts);
  expect(slowestStartMs).toBeLessThanOrEqual(START_BOUND_MS);
  for (const r of queuedRuns) {
    expect(rebuilt(r), `run ${r._id} has no rebuild entry`).toBe(true);
    expect(r.attempt).toBe(1);
  }
  const byStart = [...queuedRuns].sort((a, b) => a.startedAt!.getTime() - b.startedAt!.getTime());
  const firstLow = byStart.findIndex((r) => r.jobId === low._id);
  expect(firstLow).toBeGreaterThanOrEqual(4); // at least 4 of the 6 priority-8 runs started before any priority-2 one
  const lastHighStart = Math.max(...queuedRuns.filter((r) => r.jobId === high._id).map((r) => r.startedAt!.getTime()));
  expect(lastHighStart).toBeLessThanOrEqual(Math.min(...queuedRuns.filter((r) => r.jobId === low._id).map((r) => r.startedAt!.getTime())) + 1_000);

  // The staged run and the timers start on time.
  expect(stagedDone!.startedAt!.getTime() - stagedDone!.scheduledFor.getTime()).toBeLessThanOrEqual(LATE_BOUND_MS);
  expect(timerDone!.startedAt!.getTime() - timerDone!.scheduledFor.getTime()).toBeLessThanOrEqual(LATE_BOUND_MS);
  const everyRuns = await runsOf(every._id);
  const slots = everyRuns.map((r) => r.scheduledFor.getTime());
  expect(new Set(slots).size).toBe(slots.length); // one run per slot
  for (const r of everyRuns.filter((x) => x.scheduledFor.getTime() >= lossAt + DETECT_BOUND_MS && x.status === "SUCCEEDED"))
    expect(r.startedAt!.getTime() - r.scheduledFor.getTime(), `slot ${r.scheduledFor.toISOString()}`).toBeLessThanOrEqual(LATE_BOUND_MS);

  // Exactly once: no run's command ran twice.
  const lines = (await readFile(join(dir, "starts"), "utf8")).split("\n").filter(Boolean);
  const counts = new Map<string, number>();
  for (const id of lines) counts.set(id, (counts.get(id) ?? 0) + 1);
  const twice = [...counts].filter(([, n]) => n > 1);
  expect(twice).toEqual([]);
  for (const r of queuedRuns) expect(counts.get(r._id)).toBe(1);

  // Recorded as a recovery.
  const metric = await registry.getSingleMetric("kairos_recovery_seconds")!.get();
  const count = metric.values.find((v) => v.labels.cause === "store_rebuilt" && (v as { metricName?: string }).metricName === "kairos_recovery_seconds_count");
  expect(count?.value ?? 0).toBeGreaterThan(0);
  const stagedLateMs = stagedDone!.startedAt!.getTime() - stagedDone!.scheduledFor.getTime();
  const timerLateMs = timerDone!.startedAt!.getTime() - timerDone!.scheduledFor.getTime();
  return { detectedInMs, slowestStartMs, stagedLateMs, timerLateMs };
}

describe("after Redis loses its data", () => {
  it("FLUSHALL: noticed in a second or two, QUEUED and staged runs start within seconds, each once, timers on time", async () => {
    const admin = new Redis(redis.url);
    try {
      const figures = await lossScenario("flush", async () => {
        await admin.flushall();
      });
      console.log(`store rebuilt after FLUSHALL: ${JSON.stringify(figures)}`);
    } finally {
      await admin.quit();
    }
  }, 120_000);

  it("a restart without persistence: the same", async () => {
    const figures = await lossScenario("restart", async () => {
      const port = redis.port;
      await redis.stop();
      redis = await startRedis({ port });
    });
    console.log(`store rebuilt after a restart (times from when the restart began): ${JSON.stringify(figures)}`);
  }, 120_000);
});
