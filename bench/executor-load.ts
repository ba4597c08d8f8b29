/**
 * The executor under load (issue #27), two shapes on real processes (sandboxed `true` or `sleep`):
 *
 *   leases    3 executors × 32 slots, 96 attempts running `sleep`: the MongoDB operations a second
 *             while nothing happens but keeping them alive (lease renewals and node heartbeats),
 *             from the store's own counters.
 *   overload  one executor (32 slots): its capacity measured first (runs completed a second with a
 *             backlog always waiting), then offered 1×, 2× and 4× that for a window each (one-off
 *             jobs created at that rate); per level the goodput (runs completed a second), the
 *             attempts the node killed for lack of renewal (its log), the re-executions (runs with a
 *             second attempt) and the lateness of what started.
 *
 * Not a BullMQ shape: BullMQ runs no program and keeps no lease in a document store.
 *
 *   node --import tsx bench/executor-load.ts [--shapes leases,overload] [--window S] [--quick]
 */
import { fileURLToPath } from "node:url";
import { createJobs, deploy, NOOP_SPEC, teardown, type Deployment } from "./kairos.js";
import { mongoDocumentsWritten, mongoOpCounts, diffCounts } from "./lib/opcounts.js";
import { startRedis } from "./lib/redis.js";
import { fmtMs, summarize, type Summary } from "./lib/stats.js";
import { argValue } from "./lib/args.js";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Log lines of the executors that say the node killed or refused work because it was behind. */
const OVERLOAD_SIGNS = ["could not renew the lease in time", "the supervisor killed an attempt", "took runs too late"];

function overloadKills(d: Deployment): number {
  let n = 0;
  for (const c of d.cluster.executors) for (const [key, count] of c.logCounts) if (OVERLOAD_SIGNS.some((s) => key.includes(s))) n += count;
  return n;
}

export interface LeaseWrites {
  attempts: number;
  seconds: number;
  /** MongoDB operations a second by kind, over the window. */
  perSecond: Record<string, number>;
  /** Documents written a second (all collections), and per collection where the store says. */
  documentsPerSecond: number;
  documentsByCollection: Record<string, number>;
}

export async function benchLeaseWrites(redisUrl: string, opts: { seconds: number; executors?: number; slots?: number }): Promise<LeaseWrites> {
  const executors = opts.executors ?? 3;
  const slots = opts.slots ?? 32;
  const d = await deploy(redisUrl, "leases", { executors, slots, mode: "process" }, 1);
  try {
    const attempts = executors * slots;
    await createJobs(d.jobs, attempts, 16, (i) => ({ name: `hold${i}`, schedule: { kind: "ONCE", at: Date.now() }, spec: { ...NOOP_SPEC, argv: ["sleep", String(opts.seconds + 60)] } }));
    const deadline = Date.now() + 120_000;
    while ((await d.mongo.c.runs.countDocuments({ status: "RUNNING" })) < attempts) {
      if (Date.now() > deadline) throw new Error("the attempts did not all start within 2 minutes");
      await sleep(250);
    }
    await sleep(2_000); // the claims' confirms settle
    const a = await mongoOpCounts(d.mongo.db);
    const da = await mongoDocumentsWritten(d.mongo.db);
    const t0 = Date.now();
    await sleep(opts.seconds * 1_000);
    const b = await mongoOpCounts(d.mongo.db);
    const db = await mongoDocumentsWritten(d.mongo.db);
    const secs = (Date.now() - t0) / 1000;
    const diff = diffCounts(a, b);
    const docs = diffCounts(da.byCollection, db.byCollection);
    // Two of the four counter reads land in the window: commands of the bench's own.
    if (diff.command) diff.command = Math.max(0, diff.command - 2);
    return {
      attempts,
      seconds: secs,
      perSecond: Object.fromEntries(Object.entries(diff).map(([k, v]) => [k, v / secs])),
      documentsPerSecond: (db.total - da.total) / secs,
      documentsByCollection: Object.fromEntries(Object.entries(docs).map(([k, v]) => [k, v / secs])),
    };
  } finally {
    await teardown(d);
  }
}

export interface OverloadLevel {
  /** Offered rate ÷ measured capacity. */
  factor: number;
  offeredPerSecond: number;
  created: number;
  /** Runs that ended SUCCEEDED inside the window, a second. */
  goodput: number;
  killedForLackOfRenewal: number;
  reexecutions: number;
  lateness: Summary;
}

export interface OverloadResult {
  slots: number;
  capacityPerSecond: number;
  windowSeconds: number;
  levels: OverloadLevel[];
}

/** Runs completed a second by one executor with a backlog always waiting. */
async function measureCapacity(redisUrl: string, slots: number, seconds: number): Promise<number> {
  const d = await deploy(redisUrl, "capacity", { executors: 1, slots, mode: "process" }, 1);
  try {
    const backlog = 16 * slots; // enough waiting that the node is never idle for want of work
    const start = Date.now() + 3_000;
    const end = start + seconds * 1_000;
    let created = 0;
    while (Date.now() < end) {
      const depth = await d.cluster.pipelineDepth();
      const n = Math.min(256, backlog - (depth.armed + depth.inflight + depth.ready));
      if (n <= 0) {
        await sleep(5);
        continue;
      }
      const base = created;
      created += n;
      await createJobs(d.jobs, n, 32, (i) => ({ name: `cap${base + i}`, schedule: { kind: "ONCE", at: Date.now() }, spec: NOOP_SPEC }));
    }
    const done = await d.mongo.c.runs.countDocuments({ status: "SUCCEEDED", finishedAt: { $gte: new Date(start), $lt: new Date(end) } });
    return done / seconds;
  } finally {
    await teardown(d);
  }
}

async function offer(redisUrl: string, slots: number, factor: number, capacity: number, seconds: number): Promise<OverloadLevel> {
  const d = await deploy(redisUrl, `overload${factor}`, { executors: 1, slots, mode: "process" }, 1);
  try {
    const rate = capacity * factor;
    const start = Date.now();
    const end = start + seconds * 1_000;
    let created = 0;
    // Created at the offered rate, in 50 ms steps (the producer keeps to the schedule, not to the pipeline).
    while (Date.now() < end) {
      const due = Math.floor(((Date.now() - start) / 1000) * rate) - created;
      if (due > 0) {
        const base = created;
        created += due;
        await createJobs(d.jobs, due, 32, (i) => ({ name: `o${base + i}`, schedule: { kind: "ONCE", at: Date.now() }, spec: NOOP_SPEC }));
      }
      await sleep(50);
    }
    const ended = await d.mongo.c.runs
      .find({ finishedAt: { $gte: new Date(start), $lt: new Date(end) } }, { projection: { status: 1, attempt: 1, startedAt: 1, scheduledFor: 1 } })
      .toArray();
    const started = await d.mongo.c.runs.find({ startedAt: { $gte: new Date(start), $lt: new Date(end) } }, { projection: { startedAt: 1, scheduledFor: 1 } }).toArray();
    const reexecutions = await d.mongo.c.runs.countDocuments({ attempt: { $gt: 1 } });
    return {
      factor,
      offeredPerSecond: rate,
      created,
      goodput: ended.filter((r) => r.status === "SUCCEEDED").length / seconds,
      killedForLackOfRenewal: overloadKills(d),
      reexecutions,
      lateness: summarize(started.map((r) => r.startedAt!.getTime() - r.scheduledFor.getTime())),
    };
  } finally {
    await teardown(d);
  }
}

export async function benchOverload(redisUrl: string, opts: { windowSeconds: number; slots?: number }): Promise<OverloadResult> {
  const slots = opts.slots ?? 32;
  const capacity = await measureCapacity(redisUrl, slots, Math.max(10, Math.round(opts.windowSeconds / 3)));
  const levels: OverloadLevel[] = [];
  for (const factor of [1, 2, 4]) levels.push(await offer(redisUrl, slots, factor, capacity, opts.windowSeconds));
  return { slots, capacityPerSecond: capacity, windowSeconds: opts.windowSeconds, levels };
}

export function formatLeaseWrites(r: LeaseWrites): string {
  const parts = Object.entries(r.perSecond)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v.toFixed(1)}`);
  const total = Object.values(r.perSecond).reduce((s, v) => s + v, 0);
  return [
    `(6) keeping ${r.attempts} running attempts alive (3 executors × 32 slots, \`sleep\`), ${r.seconds.toFixed(0)} s: MongoDB operations a second`,
    `  ${total.toFixed(1)} ops/s (${parts.join(", ")})`,
    `  documents written: ${r.documentsPerSecond.toFixed(1)}/s (${Object.entries(r.documentsByCollection).sort((x, y) => y[1] - x[1]).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(", ") || "per collection: not reported by this store"})`,
  ].join("\n");
}

export function formatOverload(r: OverloadResult): string {
  const lines = [`(7) overload: one executor (${r.slots} slots, sandboxed \`true\`), capacity ${r.capacityPerSecond.toFixed(0)} runs/s, then offered 1×, 2×, 4× for ${r.windowSeconds} s each`];
  const base = r.levels.find((l) => l.factor === 1)?.goodput ?? 0;
  for (const l of r.levels) {
    lines.push(
      `  ${`${l.factor}×`.padEnd(3)} offered ${l.offeredPerSecond.toFixed(0).padStart(4)}/s  goodput ${l.goodput.toFixed(0).padStart(4)}/s (${base ? ((100 * l.goodput) / base).toFixed(0) : "?"}% of 1×)  killed for lack of renewal ${l.killedForLackOfRenewal}  re-executions ${l.reexecutions}  lateness of starts p50 ${fmtMs(l.lateness.p50)} p99 ${fmtMs(l.lateness.p99)} max ${fmtMs(l.lateness.max)}`,
    );
  }
  return lines.join("\n");
}


if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const quick = process.argv.includes("--quick");
  const shapes = (argValue("--shapes") ?? "leases,overload").split(",");
  const window = Number(argValue("--window") ?? (quick ? 20 : 60));
  const redis = await startRedis();
  try {
    if (shapes.includes("leases")) console.log(formatLeaseWrites(await benchLeaseWrites(redis.url, { seconds: quick ? 10 : 20 })) + "\n");
    if (shapes.includes("overload")) console.log(formatOverload(await benchOverload(redis.url, { windowSeconds: window })) + "\n");
  } finally {
    await redis.stop();
  }
  process.exit(0);
}
