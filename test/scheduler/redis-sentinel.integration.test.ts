/**
 * The whole product (API, scheduler, executor; lease 5 s) on a primary behind Sentinel (1 primary,
 * 1 replica, 3 sentinels): a job fires and runs; after a `SENTINEL FAILOVER` (no loss) jobs keep
 * firing without a restart; then the primary is `kill -9`ed after writes its replica never got (the
 * replica frozen and cut off meanwhile): the promoted replica lacks those timers, the schedulers
 * notice the new primary term and rebuild from MongoDB, and every job due fires once.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/tokens.js";
import type { JobDoc, RunDoc } from "../../src/domain/documents.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { waitFor } from "../helpers/graphql.js";
import { startSentinelGroup, type TestSentinelGroup } from "../helpers/redis-sentinel.js";
import { waitUntil } from "../helpers/redis-servers.js";

const caller: Principal = { userId: "000000000000000000000133", username: "sentinel", role: "ADMIN" };

let group: TestSentinelGroup;
let app: TestApp;
let dir: string;
const warnings: Array<{ msg: string; time: number }> = [];

beforeAll(async () => {
  group = await startSentinelGroup();
  dir = await mkdtemp(join(tmpdir(), "kairos-sentinel-"));
  const log = pino({ level: "warn" }, { write: (line: string) => void warnings.push(JSON.parse(line) as { msg: string; time: number }) });
  app = await startTestApp({
    log,
    env: { REDIS_SENTINELS: group.env, REDIS_SENTINEL_NAME: group.target.name, KAIROS_REDIS_PREFIX: `t-se-${Math.random().toString(36).slice(2)}`, KAIROS_SANDBOX: "none", KAIROS_LEASE: "PT5S" },
  });
}, 90_000);

afterAll(async () => {
  // The servers are stopped even when the app cannot shut down cleanly (its Redis gone after a
  // failed failover, a loaded host): a hook that timed out left six redis-servers running.
  try {
    await Promise.race([app?.dispose(), new Promise((resolve) => setTimeout(resolve, 20_000))]);
  } finally {
    await group?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}, 60_000);

const job = (name: string, at: number): Promise<JobDoc> =>
  app.services.jobs.create(caller, { name, spec: { kind: "COMMAND", command: `echo "$KAIROS_RUN_ID" >> ${join(dir, "starts")}` }, schedule: { kind: "ONCE", at } } as Parameters<TestApp["services"]["jobs"]["create"]>[1]);
const allSucceeded = (jobIds: string[], count: number): Promise<RunDoc[]> =>
  waitFor(async () => {
    const runs = await app.services.mongo.c.runs.find({ jobId: { $in: jobIds } }).toArray();
    return runs.length >= count && runs.every((r) => r.status === "SUCCEEDED") ? runs : null;
  }, 45_000, 100);

describe("Kairos behind Sentinel", () => {
  it("fires jobs before and after a failover, without a restart", async () => {
    const first = await job("before", Date.now() + 500);
    await allSucceeded([first._id], 1);
    const old = await group.primary();
    await group.failover();
    await waitUntil("a new primary", async () => (await group.primary()) !== old, 30_000);
    const second = await job("after", Date.now() + 500);
    await app.services.jobs.trigger(caller, second._id);
    await allSucceeded([second._id], 2);
  }, 90_000);

  it("loses nothing due when the primary dies with writes its replica never got", async () => {
    const due = Date.now() + 6_000;
    const jobs: JobDoc[] = [];
    let lostAt = 0;
    await group.loseWrites(async () => {
      for (let i = 0; i < 6; i++) jobs.push(await job(`lossy-${i}`, due));
      lostAt = Date.now();
    });
    const runs = await allSucceeded(jobs.map((j) => j._id), jobs.length);
    expect(runs).toHaveLength(jobs.length);
    const starts = (await readFile(join(dir, "starts"), "utf8")).split("\n").filter(Boolean);
    for (const r of runs) {
      expect(r.scheduledFor.getTime()).toBe(due);
      expect(starts.filter((id) => id === r._id), `run ${r._id}`).toHaveLength(1);
      expect(r.startedAt!.getTime() - due, `run ${r._id}`).toBeLessThanOrEqual(15_000);
    }
    expect(warnings.some((w) => w.msg.startsWith("the shared store lost its data") && w.time >= lostAt)).toBe(true);
  }, 120_000);
});
