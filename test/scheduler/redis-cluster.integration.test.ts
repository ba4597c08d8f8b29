/**
 * The whole product (API, scheduler, executor; lease 5 s) on a real Redis Cluster (3 primaries,
 * 3 replicas): a job fires and runs; then a primary fails over *losing writes* (its replica frozen
 * and cut off while jobs are created, the primary kill -9ed, the replica promoted without those
 * timers and queue entries). The schedulers notice the new primary term within a second of it
 * being readable and rebuild from MongoDB: every job due fires once and its run runs once.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/tokens.js";
import type { JobDoc, RunDoc } from "../../src/domain/documents.js";
import { redisKeys, shardOf } from "../../src/shared-state/index.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { waitFor } from "../helpers/graphql.js";
import { startRedisCluster, type TestCluster } from "../helpers/redis-cluster.js";
import { withNode } from "../helpers/redis-servers.js";

const caller: Principal = { userId: "000000000000000000000132", username: "cluster", role: "ADMIN" };
const PREFIX = `t-cl-${Math.random().toString(36).slice(2)}`;

let cluster: TestCluster;
let app: TestApp;
let dir: string;
const warnings: Array<{ msg: string; time: number; err?: unknown }> = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
  dir = await mkdtemp(join(tmpdir(), "kairos-cluster-"));
  const log = pino({ level: "warn" }, { write: (line: string) => void warnings.push(JSON.parse(line) as { msg: string; time: number }) });
  app = await startTestApp({ log, env: { REDIS_CLUSTER_NODES: cluster.env, KAIROS_REDIS_PREFIX: PREFIX, KAIROS_SANDBOX: "none", KAIROS_LEASE: "PT5S" } });
}, 90_000);

afterAll(async () => {
  // The servers are stopped even when the app cannot shut down cleanly (its Redis gone after a
  // failed failover, a loaded host): a hook that timed out left six redis-servers running.
  try {
    await Promise.race([app?.dispose(), new Promise((resolve) => setTimeout(resolve, 20_000))]);
  } finally {
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}, 60_000);

const note = () => `echo "$KAIROS_RUN_ID" >> ${join(dir, "starts")}`;
const job = (name: string, at: number): Promise<JobDoc> =>
  app.services.jobs.create(caller, { name, spec: { kind: "COMMAND", command: note() }, schedule: { kind: "ONCE", at } } as Parameters<TestApp["services"]["jobs"]["create"]>[1]);
const runsOf = (jobIds: string[]) => app.services.mongo.c.runs.find({ jobId: { $in: jobIds } }).toArray();
async function allSucceeded(jobIds: string[], count: number): Promise<RunDoc[]> {
  try {
    return await waitFor(async () => {
      const runs = await runsOf(jobIds);
      return runs.length >= count && runs.every((r) => r.status === "SUCCEEDED") ? runs : null;
    }, 45_000, 100);
  } catch (e) {
    const runs = await runsOf(jobIds);
    const jobsNow = await app.services.mongo.c.jobs.find({ _id: { $in: jobIds } }).toArray();
    throw new Error(`${String(e)}: ${runs.length} of ${count} runs: ${runs.map((r) => `${r.jobId}:${r.status}`).join(" ")}; jobs ${jobsNow.map((j) => `${j._id}@${String(j.nextFireAt?.toISOString())}`).join(" ")}; warnings ${warnings.map((w) => w.msg).join(" | ")}`);
  }
}

describe("Kairos on a Redis Cluster", () => {
  it("fires a scheduled job and runs a triggered one", async () => {
    const j = await job("cluster-fire", Date.now() + 1_000);
    await app.services.jobs.trigger(caller, j._id);
    const runs = await allSucceeded([j._id], 2);
    expect(runs.map((r) => r.status)).toEqual(["SUCCEEDED", "SUCCEEDED"]);
  });

  it("loses nothing due when a primary fails over without its last writes", async () => {
    const { shardCount } = app.services.state.wheel;
    const k = redisKeys(PREFIX);
    const slotOf = (key: string) => withNode(cluster.nodes.find((n) => n.alive())!.port, async (r) => Number(await r.call("CLUSTER", "KEYSLOT", key)));
    const slots = await Promise.all(Array.from({ length: shardCount }, (_, s) => slotOf(k.shard(s).wheel)));
    const victim = await cluster.primaryOf(slots[0]!);
    const onVictim = new Set<number>();
    for (let s = 0; s < shardCount; s++) if ((await cluster.primaryOf(slots[s]!)) === victim) onVictim.add(s);

    const due = Date.now() + 6_000;
    const jobs: JobDoc[] = [];
    const triggered: string[] = [];
    let lostAt = 0;
    // Created while the victim's replica hears nothing: their timers (and queue entries, if the
    // pool's slot is there too) exist only on the primary that is then killed.
    await cluster.loseWrites(slots[0]!, async () => {
      while (jobs.filter((j) => onVictim.has(shardOf(j._id, shardCount))).length < 3 || jobs.length < 6) jobs.push(await job(`lossy-${jobs.length}`, due));
      for (const j of jobs.slice(0, 3)) triggered.push((await app.services.jobs.trigger(caller, j._id))._id);
      lostAt = Date.now();
    });
    const runs = await allSucceeded(jobs.map((j) => j._id), jobs.length + triggered.length);
    // One fire per job (its due time) and the triggered runs, nothing twice.
    const fires = runs.filter((r) => !triggered.includes(r._id));
    expect(fires).toHaveLength(jobs.length);
    expect(new Set(fires.map((r) => r.jobId)).size).toBe(jobs.length);
    for (const r of fires) expect(r.scheduledFor.getTime()).toBe(due);
    const starts = (await readFile(join(dir, "starts"), "utf8")).split("\n").filter(Boolean);
    for (const r of runs) expect(starts.filter((id) => id === r._id), `run ${r._id}`).toHaveLength(1);
    // Noticed as a store loss after the failover, and rebuilt. The rebuild's last step (its log line)
    // may come after the runs it restored have finished: a first attempt made while the topology
    // still changed fails and the next check does it again, and it ends only once the grace for
    // runs that may have been taken has passed (CI, a loaded host: the runs were done first).
    const seen = () => warnings.map((w) => `${w.time - lostAt} ms: ${w.msg}`).join(" | ");
    expect(warnings.some((w) => w.msg === "the shared store lost its data: rebuilding it from MongoDB" && w.time >= lostAt), seen()).toBe(true);
    await waitFor(async () => warnings.some((w) => w.msg === "rebuilt the shared store from MongoDB" && w.time >= lostAt), 30_000, 100).catch(() => {
      throw new Error(`no "rebuilt the shared store from MongoDB" within 30 s of the runs' end; warnings: ${seen()}`);
    });
    // The fires on the failed-over shards are late by the failover and the rebuild, not lost.
    for (const r of fires) expect(r.startedAt!.getTime() - due, `run ${r._id}`).toBeLessThanOrEqual(15_000);
  }, 120_000);
});
