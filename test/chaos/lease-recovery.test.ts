/**
 * Recovery within one lease (issue #14), with the DEFAULT lease (PT30S), on a real cluster
 * (1 API, 2 schedulers, 3 executors, separate processes):
 *   1. an executor is killed with SIGKILL while it runs an attempt: the run starts again on another
 *      executor within lease + 1 s of its last renewal (the end of its node's lease as the store
 *      holds it: the node's epoch is ended, then its runs queued again), never before that lease
 *      end, and exactly once;
 *   2. the same, and the scheduler that owns the run's shard is killed with it: the other
 *      scheduler takes the shard (shard lease PT15S) and still starts the run again within
 *      lease + 1 s of its last renewal;
 *   3. the executor that took a run from the ready queue is killed before it confirmed its claim
 *      (the run is still QUEUED in the store, under a claim marker until take + lease): the run
 *      starts again within 1 s of the marker's end, exactly once.
 * The bound asserted is lease end + 1 s + MARGIN_MS: the margin (2 s) is for this loaded 2-core
 * machine (a new executor's pull, the program's start through bubblewrap); the figure measured is
 * printed. Before the lease watcher, this was lease end + up to 5 s (reaper period) + 5–10 s
 * (retry backoff), and more when the shard changed owner.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shardOf } from "../../src/shared-state/ports.js";
import { Cluster, waitUntil } from "./harness.js";

const LEASE_MS = 30_000;
const TARGET_MS = 1_000;
/** Allowance for a loaded machine on top of the target (see the module comment). */
const MARGIN_MS = 2_000;
const SHARDS = 8;

interface Line {
  runId: string;
  token: number;
  kind: string;
  at: number;
  pid: number;
}

describe("recovery within one lease (default lease PT30S)", () => {
  let c: Cluster;
  beforeAll(async () => {
    c = await Cluster.start({ schedulers: 2, executors: 3, slots: 2, lease: "PT30S", shards: SHARDS });
  }, 180_000);
  afterAll(async () => {
    await c?.stop();
  });

  const ticks = () => join(c.sharedDir, "lease-recovery.txt");
  const read = (): Line[] =>
    (existsSync(ticks()) ? readFileSync(ticks(), "utf8") : "")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => {
        const [runId, token, kind, at, node] = l.split(" ");
        return { runId: runId!, token: Number(token), kind: kind!, at: Number(at), pid: c.pidOfNode(node!) };
      });

  /** A job whose first attempt runs for 2 minutes and whose later attempts end at once. */
  async function startLongRun(name: string) {
    const marker = join(c.sharedDir, `${name}.first`);
    const command =
      `umask 0; echo "$KAIROS_RUN_ID $KAIROS_FENCING_TOKEN start $(date +%s%3N) $KAIROS_NODE_ID" >> '${ticks()}'; ` +
      `if [ -e '${marker}' ]; then exit 0; fi; touch '${marker}'; sleep 120`;
    const jobId = await c.createJob({ name, schedule: { kind: "ONCE" }, spec: { command, timeout: "PT5M" } });
    const db = await c.db();
    // Attempt 1 runs and its claim is confirmed (RUNNING with a lease in the store).
    const run = await waitUntil(`${name}: attempt 1 confirmed`, async () => (await db.collection("runs").findOne({ jobId, status: "RUNNING", attempt: 1 })) ?? null, 60_000, 50);
    const runId = String(run._id);
    const first = await waitUntil(`${name}: attempt 1's start line`, () => read().find((l) => l.runId === runId && l.kind === "start"), 30_000, 50);
    const executor = [...c.procs.values()].find((p) => p.role === "executor" && p.pid === first.pid);
    expect(executor, `the executor with pid ${first.pid}`).toBeDefined();
    return { jobId, runId, first, executor: executor!.name };
  }

  /** After the kills: the lease end the store holds, the restart, and the run's end; checked. */
  async function checkRecovery(name: string, runId: string, firstToken: number) {
    const db = await c.db();
    // A renewal sent just before the kill may still land: read the lease once it cannot move.
    await new Promise((r) => setTimeout(r, 1_000));
    const held = await db.collection("runs").findOne({ _id: runId as any });
    expect(held?.status, `${name}: still RUNNING under the dead executor's lease`).toBe("RUNNING");
    // The attempt's lease is its node's (claimed under the node's lease epoch): the node lease's
    // end, or the claim's own if later.
    expect(held?.nodeEpoch, `${name}: claimed under a node lease epoch`).toBeGreaterThanOrEqual(1);
    const node = await db.collection("nodes").findOne({ _id: held!.nodeId });
    expect(node?.leaseEpoch, `${name}: the node still holds the epoch the run was claimed under`).toBe(held!.nodeEpoch);
    const leaseEnd = Math.max((node!.leaseUntil as Date).getTime(), (held!.leaseUntil as Date).getTime());
    expect(leaseEnd, `${name}: a lease of about PT30S`).toBeGreaterThan(Date.now() + LEASE_MS - 12_000);

    const second = await waitUntil(
      `${name}: attempt 2 to start`,
      () => read().find((l) => l.runId === runId && l.kind === "start" && l.token > firstToken),
      LEASE_MS + 30_000,
      20,
    );
    const done = await waitUntil(`${name}: the run to succeed`, async () => (await db.collection("runs").findOne({ _id: runId as any, status: "SUCCEEDED" })) ?? null, 30_000, 100);
    const late = second.at - leaseEnd;
    const requeue = done.history.find((h: any) => h.status === "QUEUED" && /executor lost: node lease \(epoch \d+\) expired/.test(h.reason ?? ""));
    process.stderr.write(
      `[lease-recovery] ${name}: lease ended ${new Date(leaseEnd).toISOString()}, queued again +${requeue ? requeue.at.getTime() - leaseEnd : "?"} ms, ` +
        `attempt 2 started +${late} ms (target ${TARGET_MS} ms, asserted ≤ ${TARGET_MS + MARGIN_MS} ms)\n`,
    );
    // Never before the lease ended (the dead executor's program may run until its own deadline).
    expect(late, `${name}: started again before the lease ended`).toBeGreaterThanOrEqual(0);
    expect(late, `${name}: started again ${late} ms after the lease ended`).toBeLessThanOrEqual(TARGET_MS + MARGIN_MS);
    // Exactly once: two starts in all (the killed attempt and the new one), one requeue, attempt 2.
    expect(read().filter((l) => l.runId === runId && l.kind === "start")).toHaveLength(2);
    expect(done.history.filter((h: any) => h.status === "QUEUED" && /executor lost/.test(h.reason ?? ""))).toHaveLength(1);
    expect(requeue?.reason).toMatch(/on node [0-9a-f]+; queued again as attempt 2$/);
    expect(done.attempt).toBe(2);
    expect(done.history.some((h: any) => h.status === "RETRY_SCHEDULED")).toBe(false);
  }

  it("an executor killed mid-run: the run starts again within lease + 1 s of its last renewal, once", async () => {
    const { runId, first, executor } = await startLongRun("executor-killed");
    await c.kill9(executor);
    await checkRecovery("executor-killed", runId, first.token);
  }, 120_000);

  it("an executor killed before it confirmed its claim: the run starts again within 1 s of the claim marker's end, once", async () => {
    const redis = await c.redis();
    const claims = `${c.prefix}:ready:{default}:claims`;
    const before = new Set(await redis.zrangebyscore(claims, Date.now(), "+inf"));
    const executors = c.names("executor");
    const name = "taken-killed";
    const command =
      `umask 0; echo "$KAIROS_RUN_ID $KAIROS_FENCING_TOKEN start $(date +%s%3N) $KAIROS_NODE_ID" >> '${ticks()}'; ` +
      `sleep 1`;
    const jobId = await c.createJob({ name, schedule: { kind: "ONCE" }, spec: { command, timeout: "PT5M" } });
    // The moment an executor takes the run (its marker appears, before the program starts and a
    // second before the claim is confirmed), every executor is killed: the taker cannot confirm.
    const runId = await waitUntil(`${name}: taken`, async () => (await redis.zrangebyscore(claims, Date.now(), "+inf")).find((id) => !before.has(id)) ?? null, 60_000, 2);
    await Promise.all(executors.map((e) => c.kill9(e)));
    const db = await c.db();
    const held = await db.collection("runs").findOne({ _id: runId as any });
    expect(held?.jobId).toBe(jobId);
    expect(held?.status, `${name}: never claimed in the store`).toBe("QUEUED");
    const markerEnd = Number(await redis.zscore(claims, runId));
    expect(markerEnd).toBeGreaterThan(Date.now() + LEASE_MS - 5_000);
    await Promise.all(executors.map((e) => c.restart(e)));
    // The killed taker's attempt ran (if its program started at all) under the payload's token + 1;
    // the requeue bumps the stored token to that, so the next attempt runs under + 2.
    const takerToken = held!.fencingToken + 1;
    const second = await waitUntil(`${name}: the run to start again`, () => read().find((l) => l.runId === runId && l.kind === "start" && l.token > takerToken), LEASE_MS + 30_000, 20);
    const done = await waitUntil(`${name}: the run to succeed`, async () => (await db.collection("runs").findOne({ _id: runId as any, status: "SUCCEEDED" })) ?? null, 30_000, 100);
    const requeues = done.history.filter((h: any) => h.status === "QUEUED" && /never confirmed/.test(h.reason ?? ""));
    const late = second.at - markerEnd;
    process.stderr.write(
      `[lease-recovery] ${name}: claim marker ended ${new Date(markerEnd).toISOString()}, queued again +${requeues[0] ? requeues[0].at.getTime() - markerEnd : "?"} ms, ` +
        `started again +${late} ms (target ${TARGET_MS} ms, asserted ≤ ${TARGET_MS + MARGIN_MS} ms)\n`,
    );
    expect(requeues).toHaveLength(1);
    expect(requeues[0].reason).toBe(`executor lost: taken from the queue and never confirmed, claim expired at ${new Date(markerEnd).toISOString()}; queued again`);
    expect(late, `${name}: started again before the claim marker ended`).toBeGreaterThanOrEqual(0);
    expect(late, `${name}: started again ${late} ms after the claim marker ended`).toBeLessThanOrEqual(TARGET_MS + MARGIN_MS);
    expect(read().filter((l) => l.runId === runId && l.kind === "start" && l.token > takerToken)).toHaveLength(1);
    expect(read().filter((l) => l.runId === runId && l.kind === "start" && l.token === takerToken).length).toBeLessThanOrEqual(1);
  }, 150_000);

  it("the shard's scheduler killed too: the new owner starts the run again within lease + 1 s", async () => {
    const { jobId, runId, first, executor } = await startLongRun("shard-moved");
    const redis = await c.redis();
    const shard = shardOf(jobId, SHARDS);
    const holder = await redis.hget(`${c.prefix}:lease:{${shard}}`, "holder");
    const owner = [...c.procs.values()].find((p) => p.role === "scheduler" && p.running && holder?.includes(`:${p.pid}:`));
    expect(owner, `the scheduler holding shard ${shard} (${holder})`).toBeDefined();
    await Promise.all([c.kill9(executor), c.kill9(owner!.name)]);
    await checkRecovery("shard-moved", runId, first.token);
    // The shard did move: its lease is held by the other scheduler now.
    const now = await redis.hget(`${c.prefix}:lease:{${shard}}`, "holder");
    expect(now).not.toBe(holder);
  }, 120_000);
});
