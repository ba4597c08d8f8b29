/**
 * The Kairos side of issue #5's benchmarks, on the same three shapes as BullMQ (bench/lib/shapes.ts):
 *
 *   (1) burst       — N ONCE jobs all due at the same instant T, each a COMMAND `argv: ["true"]`;
 *   (2) schedules   — S INTERVAL `PT1S` (or CRON `* * * * * *`) jobs, for D seconds;
 *   (3) throughput  — a producer keeps a bounded backlog of due ONCE jobs; 1 or 2 schedulers.
 *
 * Deployment per run (bench/lib/kairos-cluster.ts), all on this machine, all fresh:
 *   - the MongoDB emulator in its own process, in memory (no journal: the private Redis has no
 *     persistence either); pass `mongoUrl` to use a real MongoDB instead;
 *   - scheduler and executor roles as separate processes, `node --import tsx src/main.ts <role>`,
 *     configured through MONGO_URL, MONGO_DB, REDIS_URL, KAIROS_REDIS_PREFIX (unique per run),
 *     KAIROS_SHARDS, KAIROS_EXECUTOR_SLOTS, KAIROS_LOG_LEVEL=warn;
 *   - the bench process plays the API: it creates jobs with `JobService.create` (the code behind the
 *     GraphQL `createJob` mutation), over its own connections to the same stores.
 *
 * Lateness = run.startedAt − run.scheduledFor, read from MongoDB after the run. Kairos sets
 * `startedAt` when an executor claims the run (QUEUED → RUNNING), just *before* it spawns the
 * run's process, so it is the dispatch latency. Each result also carries the per-stage figures
 * (bench/lib/kairos-report.ts): → queued (scheduler), → started (claimed), → finished (process exited).
 *
 * Executor modes:
 *   - `process` (the product): every run is a real OS process (`/bin/sh` watchdog + `exec true`);
 *   - `noop`: the real executor with src/executor/process.ts swapped for a no-op by a module hook
 *     (bench/lib/noop-process-hooks.mjs) — no process per run, like BullMQ's empty processor. It
 *     separates Kairos's dispatch cost from the cost of a process per run.
 *
 * Run directly:  node --import tsx bench/kairos.ts [--quick] [--shapes burst,schedules,throughput]
 *                [--modes process,noop] [--runtime compiled|tsx] [--profile DIR]
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import type { Principal } from "../src/auth/tokens.js";
import type { JobInput, JobService } from "../src/core/jobs/index.js";
import { jobTimerId } from "../src/domain/timers.js";
import { shardOf } from "../src/shared-state/ports.js";
import type { RedisTarget } from "../src/shared-state/index.js";
import { newId, type Mongo } from "../src/store/mongo.js";
import { insertBenchAlertRules } from "./lib/alert-rules.js";
import type { RunDoc } from "../src/domain/documents.js";
import { buildKairos, Child, KairosCluster, processCpuMs, startEmulatorProcess, type Runtime } from "./lib/kairos-cluster.js";
import {
  extraRatioLines,
  formatStages,
  type KairosBurstResult,
  type KairosScheduleResult,
  type KairosStages,
  type KairosThroughputResult,
} from "./lib/kairos-report.js";
import { diffCounts, mongoOpCounts, perRun, redisCommandCounts, REDIS_HOUSEKEEPING, type Counts } from "./lib/opcounts.js";
import { startRedis } from "./lib/redis.js";
import { burstRatios, formatBurst, formatSchedules, formatThroughput, scheduleRatios } from "./lib/report.js";
import { fmtMs, summarize } from "./lib/stats.js";
import { argValue } from "./lib/args.js";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** The owner of every bench job (JobService takes the caller's principal; no user document needed). */
export const BENCH_USER: Principal = { userId: newId(), username: "bench", role: "ADMIN" };
/**
 * The lightest honest Kairos job: a real program that does nothing, asking for what `true` needs
 * (the default reservation, 1 core and 512 MiB per run, would let only ~47 runs at once fit a
 * 24 GiB node's memory, and the rest wait for room).
 */
export const NOOP_SPEC = { kind: "COMMAND" as const, argv: ["true"], resources: { cpu: 0.1, memoryMb: 16, pids: 16, diskMb: 1 } };
// WITHDRAWN: a staged run taken back before its time (a pause or an edit); the API reports it so, not as CANCELLED.
const TERMINAL = ["SUCCEEDED", "FAILED", "TIMED_OUT", "CANCELLED", "WITHDRAWN", "DEAD"];

/** process: `true` in the sandbox; noop: the executor with a no-op in place of the process; http: HTTP jobs to a loopback receiver (no process by design). */
export type ExecutorMode = "process" | "noop" | "http";

export interface KairosOptions {
  /** A real MongoDB to use instead of starting the emulator. */
  mongoUrl?: string;
  /** Executor processes. @default 2 */
  executors?: number;
  /** Slots per executor process (KAIROS_EXECUTOR_SLOTS). @default 64 */
  slots?: number;
  /** @default "process" */
  mode?: ExecutorMode;
  /** KAIROS_SHARDS. @default 64 */
  shards?: number;
  /** KAIROS_STAGE_AHEAD in ms, set explicitly. @default 10_000 (the product default) */
  stageAheadMs?: number;
  /** Jobs created concurrently by the bench (the API's callers). @default 32 */
  createConcurrency?: number;
  /** Write a V8 CPU profile of every process here. */
  cpuProfDir?: string;
  /**
   * `compiled` (default): the roles run from `tsc` output, as `kairos <role>` does in production;
   * `tsx`: `node --import tsx src/main.ts <role>` (bigger processes; see bench/lib/kairos-cluster.ts).
   */
  runtime?: Runtime;
  /** Alert rules of the bench user made before the measurement (issue #31's cost), and how many of them are on deadlines (bench/lib/alert-rules.ts). @default none */
  alertRules?: { count: number; deadlines: number };
  /** Progress lines on stderr. */
  verbose?: boolean;
}

const VARIANT: Record<ExecutorMode, string> = { process: "process", noop: "no process", http: "HTTP no-op" };

let gitDescription: string | undefined;
/** "1e4c45f" or "1e4c45f+dirty(src)": what code was measured. */
export function kairosRevision(): string {
  if (gitDescription) return gitDescription;
  try {
    const root = fileURLToPath(new URL("..", import.meta.url));
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src"], { cwd: root, encoding: "utf8" }).trim();
    gitDescription = dirty ? `${sha}+uncommitted src changes` : sha;
  } catch {
    gitDescription = "unknown";
  }
  return gitDescription;
}

// ---------------------------------------------------------------------------------------------
// Deployment, CPU accounting, helpers
// ---------------------------------------------------------------------------------------------

export interface Deployment {
  cluster: KairosCluster;
  ops: OpMeter;
  emulator: Child | null;
  jobs: JobService;
  mongo: Mongo;
  cpu: CpuMeter;
  o: Required<Omit<KairosOptions, "mongoUrl" | "cpuProfDir" | "alertRules">> & Pick<KairosOptions, "mongoUrl" | "cpuProfDir" | "alertRules">;
  /** Set when the compiled build had type errors (work in progress in src/). */
  buildWarning: string;
  /** Mode http: the loopback receiver the jobs call. */
  receiver: HttpReceiver | null;
}

/**
 * The target of the HTTP no-op jobs: a loopback server in the bench process answering 204 at once,
 * noting for each request how long after its fire's nominal time (Kairos-Scheduled-For) it arrived.
 */
class HttpReceiver {
  readonly latencies: number[] = [];
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<HttpReceiver> {
    let self: HttpReceiver | null = null;
    const server = createServer((req, res) => {
      const at = Date.now();
      const due = Date.parse(String(req.headers["kairos-scheduled-for"]));
      if (self && Number.isFinite(due)) self.latencies.push(at - due);
      req.resume();
      req.on("end", () => {
        res.writeHead(204);
        res.end();
      });
    });
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    self = new HttpReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
    return self;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** What the bench's jobs run in this deployment's mode. */
function specOf(d: Deployment): JobInput["spec"] {
  if (d.o.mode !== "http") return NOOP_SPEC;
  return { kind: "HTTP", timeout: "PT10S", http: { method: "POST", url: d.receiver!.url, body: "" } };
}

export async function deploy(redisUrl: string | RedisTarget, shape: string, opts: KairosOptions, schedulers: number): Promise<Deployment> {
  const o = { executors: 2, slots: 64, mode: "process" as ExecutorMode, shards: 64, stageAheadMs: 10_000, createConcurrency: 32, verbose: false, runtime: "compiled" as Runtime, ...opts };
  const buildWarning = o.runtime === "compiled" ? await buildKairos() : "";
  const emu = o.mongoUrl ? null : await startEmulatorProcess({ cpuProfDir: o.cpuProfDir, runtime: o.runtime });
  const tag = `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const cluster = new KairosCluster({
    mongoUrl: o.mongoUrl ?? emu!.uri,
    redisUrl,
    mongoDb: `bench_${shape}_${tag}`,
    prefix: `bench-${shape}-${tag}`,
    shards: o.shards,
    stageAheadMs: o.stageAheadMs,
    cpuProfDir: o.cpuProfDir,
    runtime: o.runtime,
  });
  try {
    const receiver = o.mode === "http" ? await HttpReceiver.start() : null;
    const env = receiver ? { KAIROS_HTTP_JOB_ALLOWED_CIDRS: "127.0.0.1/32" } : undefined;
    await Promise.all([cluster.startExecutors(o.executors, o.slots, { noop: o.mode === "noop", ...(env ? { env } : {}) }), cluster.startSchedulers(schedulers)]);
    const { jobs, mongo } = await cluster.connect();
    if (o.alertRules) await insertBenchAlertRules(mongo, BENCH_USER.userId, o.alertRules.count, o.alertRules.deadlines);
    // HTTP requests are signed with their owner's secret: the bench user must exist.
    if (receiver) await mongo.c.users.insertOne({ _id: BENCH_USER.userId, username: BENCH_USER.username, passwordHash: "-", role: "ADMIN", maxConcurrentRuns: null, createdAt: new Date(), updatedAt: new Date() });
    const cpu = new CpuMeter(cluster, emu?.child.pid, await cluster.redisPids());
    return { cluster, emulator: emu?.child ?? null, jobs, mongo, cpu, ops: new OpMeter(cluster.redisClient, mongo), o, buildWarning, receiver };
  } catch (e) {
    await cluster.stop().catch(() => undefined);
    await emu?.child.stop();
    throw e;
  }
}

export async function teardown(d: Deployment): Promise<string[]> {
  const notes = await d.cluster.stop();
  await d.receiver?.stop();
  await d.emulator?.stop();
  if (d.buildWarning) notes.push(d.buildWarning);
  return notes;
}

type CpuSnap = { at: number; ms: Record<string, number> };

/** CPU use per process between two snapshots, as % of one core. */
class CpuMeter {
  constructor(
    private readonly cluster: KairosCluster,
    private readonly emulatorPid: number | undefined,
    /** Every redis-server process of the deployment (six on the test Cluster): their CPU is summed. */
    private readonly redisPids: number[],
  ) {}

  snap(): CpuSnap {
    const u = process.cpuUsage();
    return {
      at: Date.now(),
      ms: {
        ...this.cluster.cpu(),
        ...(this.emulatorPid ? { emulator: processCpuMs(this.emulatorPid) } : {}),
        redis: this.redisPids.reduce((sum, pid) => sum + processCpuMs(pid), 0),
        "bench (API/producer)": (u.user + u.system) / 1000,
      },
    };
  }

  line(a: CpuSnap, b: CpuSnap): string {
    const wall = Math.max(1, b.at - a.at);
    let total = 0;
    const parts = Object.keys(b.ms).map((k) => {
      const pct = (100 * (b.ms[k]! - (a.ms[k] ?? 0))) / wall;
      if (Number.isFinite(pct)) total += pct;
      return `${k} ${Number.isFinite(pct) ? pct.toFixed(0) : "?"}%`;
    });
    return `${parts.join(", ")} (sum ${total.toFixed(0)}% of ${fmtMs(wall)}; 100% = one core)`;
  }
}

type OpSnap = { redis: Counts; mongo: Counts };

/** Redis commands and MongoDB operations between two snapshots (bench/lib/opcounts.ts). */
class OpMeter {
  constructor(
    private readonly redis: import("ioredis").Redis | import("ioredis").Cluster,
    private readonly mongo: Mongo,
  ) {}

  async snap(): Promise<OpSnap> {
    const [redis, mongo] = await Promise.all([redisCommandCounts(this.redis), mongoOpCounts(this.mongo.db)]);
    return { redis, mongo };
  }

  /** "per run: 11.0 Mongo ops/run (…); 9.0 Redis commands/run (…)". */
  line(a: OpSnap, b: OpSnap, runs: number, skipRedis: string[] = []): string {
    return (
      `work per run: ${perRun("MongoDB ops", diffCounts(a.mongo, b.mongo), runs)}; ` +
      perRun("Redis commands", diffCounts(a.redis, b.redis), runs, [...REDIS_HOUSEKEEPING, ...skipRedis])
    );
  }
}

/** Creates `count` jobs through JobService with bounded concurrency; returns their ids and the time taken. */
export async function createJobs(jobs: JobService, count: number, concurrency: number, input: (i: number) => JobInput): Promise<{ ids: string[]; ms: number }> {
  const ids = new Array<string>(count);
  const started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        ids[i] = (await jobs.create(BENCH_USER, input(i)))._id;
      }
    }),
  );
  return { ids, ms: Date.now() - started };
}

type RunTimes = Pick<RunDoc, "_id" | "jobId" | "scheduledFor" | "queuedAt" | "startedAt" | "finishedAt" | "status">;

const RUN_FIELDS = { _id: 1, jobId: 1, scheduledFor: 1, queuedAt: 1, startedAt: 1, finishedAt: 1, status: 1 } as const;

/** Stage lateness over `runs`; instants after `cut` (when given) count as not reached. */
function stagesOf(runs: readonly RunTimes[], cut = Infinity): KairosStages {
  const since = (d: Date | null, r: RunTimes) => (d && d.getTime() <= cut ? d.getTime() - r.scheduledFor.getTime() : null);
  const pick = (f: (r: RunTimes) => number | null) => runs.map(f).filter((x): x is number => x !== null);
  return {
    queued: summarize(pick((r) => since(r.queuedAt, r))),
    started: summarize(pick((r) => since(r.startedAt, r))),
    finished: summarize(pick((r) => since(r.finishedAt, r))),
  };
}

function countBy<T>(items: readonly T[], key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const it of items) out[key(it)] = (out[key(it)] ?? 0) + 1;
  return out;
}

function settingsOf(d: Deployment, schedulers: number): Record<string, string | number> {
  return {
    kairos: kairosRevision(),
    schedulers,
    executors: d.o.executors,
    "slots each": d.o.slots,
    run: d.o.mode === "process" ? "process argv [true]" : d.o.mode === "http" ? "HTTP POST to a loopback receiver (204), made by the executor" : "no process (no-op runProcess)",
    shards: d.o.shards,
    "stage ahead": `${d.o.stageAheadMs / 1000} s`,
    store: d.o.mongoUrl ? "MongoDB" : "emulator (own process, in memory)",
    processes: d.o.runtime === "compiled" ? "compiled (tsc → node main.js <role>)" : "tsx (node --import tsx src/main.ts <role>)",
  };
}

function progress(d: Deployment, msg: string): void {
  if (d.o.verbose) process.stderr.write(`[kairos bench] ${msg}\n`);
}

// ---------------------------------------------------------------------------------------------
// (1) burst
// ---------------------------------------------------------------------------------------------

export interface KairosBurstOptions extends KairosOptions {
  /** ONCE jobs to create. @default 20_000 */
  jobs?: number;
  /** Give up waiting this long after T. @default 180_000 */
  timeoutMs?: number;
  /** T is at least this far ahead of the start of creation. @default 5_000 */
  minLeadMs?: number;
}

/**
 * (1) `jobs` ONCE jobs with `at: T`, created through JobService while one scheduler and the
 * executors are up and idle. T is chosen after timing the creation of throw-away jobs (due in an
 * hour, deleted again), so that creating all of them ends before T with margin (×1.5 + 3 s); the
 * bench fails if it does not. Waits until every run finished (or `timeoutMs` after T).
 */
export async function benchKairosBurst(redisUrl: string, opts: KairosBurstOptions = {}): Promise<KairosBurstResult> {
  const { jobs = 20_000, timeoutMs = 180_000, minLeadMs = 5_000 } = opts;
  const d = await deploy(redisUrl, "burst", opts, 1);
  const notes: string[] = [];
  try {
    // Calibrate creation speed (the second half of 1,000 throw-away jobs due in an hour, after the
    // first half warmed up every process), then remove them again (document and timer).
    const calN = 500;
    const calInput = (i: number) => ({ name: `cal-${i}`, schedule: { kind: "ONCE" as const, at: Date.now() + 3_600_000 }, spec: NOOP_SPEC });
    const warm = await createJobs(d.jobs, calN, d.o.createConcurrency, calInput);
    const cal = await createJobs(d.jobs, calN, d.o.createConcurrency, (i) => calInput(calN + i));
    const calIds = [...warm.ids, ...cal.ids];
    await d.mongo.c.jobs.deleteMany({ _id: { $in: calIds } });
    const { state } = await d.cluster.connect();
    await Promise.all(calIds.map((id) => state.wheel.disarm(shardOf(id, d.o.shards), jobTimerId(id))));
    const leadMs = Math.max(minLeadMs, Math.ceil((cal.ms / calN) * jobs * 1.5 + 3_000));

    const watch = await d.cluster.watchRuns();
    const ops0 = await d.ops.snap();
    const T = Date.now() + leadMs;
    const add = await createJobs(d.jobs, jobs, d.o.createConcurrency, (i) => ({ name: `burst-${i}`, schedule: { kind: "ONCE", at: T }, spec: NOOP_SPEC }));
    if (Date.now() >= T) throw new Error(`burst: creating ${jobs} jobs took ${add.ms} ms, past T (lead ${leadMs} ms)`);
    progress(d, `burst: created ${jobs} jobs in ${add.ms} ms; T in ${T - Date.now()} ms`);
    await sleep(T - Date.now());
    const cpu0 = d.cpu.snap();

    const deadline = T + timeoutMs;
    const terminal = () => TERMINAL.reduce((n, s) => n + (watch.counts.get(s) ?? 0), 0);
    let lastReport = Date.now();
    while (terminal() < jobs && Date.now() < deadline) {
      await sleep(50);
      if (Date.now() - lastReport >= 10_000) {
        lastReport = Date.now();
        progress(d, `burst: T+${fmtMs(Date.now() - T)}: ${watch.counts.get("RUNNING") ?? 0} claimed, ${terminal()} finished`);
      }
    }
    const cpu1 = d.cpu.snap();
    const ops1 = await d.ops.snap();
    await watch.stop();
    if (terminal() < jobs) notes.push(`gave up ${fmtMs(timeoutMs)} after T with ${terminal()}/${jobs} runs finished`);

    const runs = (await d.mongo.c.runs.find({}, { projection: RUN_FIELDS }).toArray()) as RunTimes[];
    const started = runs.filter((r) => r.startedAt);
    let first = Infinity;
    let last = -Infinity;
    for (const r of started) {
      const t = r.startedAt!.getTime();
      first = Math.min(first, t);
      last = Math.max(last, t);
    }
    if (runs.length !== jobs) notes.push(`${runs.length} runs for ${jobs} jobs`);
    const bad = runs.filter((r) => r.status !== "SUCCEEDED").length;
    if (bad) notes.push(`run statuses: ${JSON.stringify(countBy(runs, (r) => r.status))}`);
    notes.push(`${d.ops.line(ops0, ops1, jobs)} — creation included`);
    notes.push(`T was ${fmtMs(leadMs)} after creation began (calibrated on ${calN} jobs after ${calN} warm-up ones: ${(cal.ms / calN).toFixed(2)} ms/job)`);
    return {
      system: "kairos",
      variant: VARIANT[d.o.mode],
      jobs,
      started: started.length,
      dueAt: T,
      leadMs,
      addMs: add.ms,
      allStartedMs: started.length ? last - T : Number.NaN,
      firstStartedMs: started.length ? first - T : Number.NaN,
      lateness: summarize(started.map((r) => r.startedAt!.getTime() - r.scheduledFor.getTime())),
      stages: stagesOf(runs),
      cpu: d.cpu.line(cpu0, cpu1),
      settings: { ...settingsOf(d, 1), "created via": `JobService.create ×${d.o.createConcurrency} concurrent` },
      notes,
    };
  } finally {
    notes.push(...(await teardown(d)));
  }
}

// ---------------------------------------------------------------------------------------------
// (2) recurring schedules
// ---------------------------------------------------------------------------------------------

export interface KairosScheduleOptions extends KairosOptions {
  /** Jobs to create. @default 1_000 */
  schedules?: number;
  /** Measurement window (s). @default 60 */
  seconds?: number;
  /**
   * `interval`: INTERVAL `PT1S` with the default `startAt = now` (each job's phase is the
   * millisecond it was created, like BullMQ's `{ every: 1000 }`). `cron`: CRON `* * * * * *`,
   * every job on the same second boundary (like BullMQ's `{ pattern: "* * * * * *" }`).
   * @default "interval"
   */
  form?: "interval" | "cron";
  /** After the window closes, wait this long for late starts of in-window slots. @default 3_000 */
  graceMs?: number;
}

/**
 * (2) `schedules` recurring jobs; the window opens on the first second boundary ≥ 1 s after the
 * last one was created and lasts `seconds`. Only runs whose slot (`scheduledFor`) lies in the
 * window count; a slot counts as fired when its run started before the window end + grace. The
 * role processes are stopped before the runs are read.
 */
export async function benchKairosSchedules(redisUrl: string, opts: KairosScheduleOptions = {}): Promise<KairosScheduleResult> {
  const { schedules = 1_000, seconds = 60, form = "interval", graceMs = 3_000 } = opts;
  const d = await deploy(redisUrl, `sched_${form}`, opts, 1);
  const notes: string[] = [];
  try {
    const schedule = form === "interval" ? ({ kind: "INTERVAL", every: "PT1S" } as const) : ({ kind: "CRON", cron: "* * * * * *" } as const);
    const add = await createJobs(d.jobs, schedules, d.o.createConcurrency, (i) => ({ name: `s${i}`, schedule: { ...schedule }, spec: NOOP_SPEC }));
    const windowStart = Math.ceil((Date.now() + 1_000) / 1_000) * 1_000;
    const windowEnd = windowStart + seconds * 1_000;
    progress(d, `schedules (${form}): created ${schedules} in ${add.ms} ms; window ${seconds} s`);
    await sleep(windowStart - Date.now());
    const cpu0 = d.cpu.snap();
    const ops0 = await d.ops.snap();
    await sleep(windowEnd - Date.now());
    const cpu1 = d.cpu.snap();
    const ops1 = await d.ops.snap();
    await sleep(windowEnd + graceMs - Date.now());
    const cut = Date.now();
    notes.push(...(await d.cluster.stopRoles()));

    const inWindow = { $gte: new Date(windowStart), $lt: new Date(windowEnd) };
    const runs = (await d.mongo.c.runs.find({ scheduledFor: inWindow }, { projection: RUN_FIELDS }).toArray()) as RunTimes[];
    const fired = runs.filter((r) => r.startedAt && r.startedAt.getTime() <= cut);
    const seen = new Set<string>();
    let duplicates = 0;
    const lateness: number[] = [];
    for (const r of fired) {
      const key = `${r.jobId}@${r.scheduledFor.getTime()}`;
      if (seen.has(key)) {
        duplicates++;
        continue;
      }
      seen.add(key);
      lateness.push(r.startedAt!.getTime() - r.scheduledFor.getTime());
    }
    const notStarted = runs.length - fired.length;
    if (notStarted) notes.push(`${notStarted} in-window runs were created but had not started ${fmtMs(graceMs)} after the window (still queued)`);
    const outcomes = await d.mongo.c.fires
      .aggregate<{ _id: string; n: number }>([{ $match: { slotAt: inWindow } }, { $group: { _id: "$outcome", n: { $sum: 1 } } }])
      .toArray();
    const other = outcomes.filter((o) => o._id !== "FIRED");
    if (other.length) notes.push(`fire ledger, in-window slots not FIRED: ${other.map((o) => `${o._id} ${o.n}`).join(", ")}`);
    notes.push(`${d.ops.line(ops0, ops1, runs.length)} — over the window, per in-window run`);
    notes.push(`creating ${schedules} jobs took ${fmtMs(add.ms)}`);
    return {
      system: "kairos",
      variant: `${VARIANT[d.o.mode]}, ${form === "interval" ? "INTERVAL PT1S" : "CRON * * * * * *"}`,
      schedules,
      durationMs: windowEnd - windowStart,
      windowStart,
      fires: seen.size,
      expectedFires: schedules * seconds,
      duplicates,
      lateness: summarize(lateness),
      // Every in-window run for "→ queued" (did the scheduler keep up?), the started ones for the rest.
      stages: stagesOf(runs, cut),
      cpu: d.cpu.line(cpu0, cpu1),
      settings: { ...settingsOf(d, 1), schedule: form === "interval" ? "INTERVAL PT1S" : "CRON '* * * * * *'" },
      notes,
    };
  } finally {
    notes.push(...(await teardown(d)));
  }
}

// ---------------------------------------------------------------------------------------------
// (3) throughput
// ---------------------------------------------------------------------------------------------

export interface KairosThroughputOptions extends KairosOptions {
  /** Scheduler processes. @default 1 */
  schedulers?: 1 | 2;
  /** Measurement window (s). @default 20 */
  seconds?: number;
  /** Production runs this long before the window opens. @default 2_000 */
  warmupMs?: number;
  /**
   * The producer keeps about this many fires waiting (timers due + in flight + ready queue) by
   * creating ONCE jobs due now whenever there are fewer. @default 4 × total executor slots
   */
  backlog?: number;
  /** Most jobs created per top-up. @default 256 */
  batch?: number;
}

/**
 * (3) A producer in this process (JobService.create of ONCE jobs due now, like the API would)
 * keeps about `backlog` fires waiting in Kairos's pipeline; `schedulers` scheduler processes fire
 * them and the executors run them. Counts the runs started inside the window; lateness =
 * startedAt − scheduledFor (= creation time).
 */
export async function benchKairosThroughput(redisUrl: string | RedisTarget, opts: KairosThroughputOptions = {}): Promise<KairosThroughputResult> {
  const { schedulers = 1, seconds = 20, warmupMs = 2_000, batch = 256 } = opts;
  const d = await deploy(redisUrl, `tput${schedulers}`, opts, schedulers);
  const backlog = opts.backlog ?? 4 * d.o.executors * d.o.slots;
  const notes: string[] = [];
  try {
    const windowStart = Date.now() + warmupMs;
    const windowEnd = windowStart + seconds * 1_000;
    let created = 0;
    let checks = 0;
    let empty = 0;
    let cpu0: CpuSnap | null = null;
    let cpu1: CpuSnap | null = null;
    let ops0: OpSnap | null = null;
    while (Date.now() < windowEnd) {
      if (!cpu0 && Date.now() >= windowStart) {
        cpu0 = d.cpu.snap();
        ops0 = await d.ops.snap();
      }
      const depth = await d.cluster.pipelineDepth();
      const waiting = depth.armed + depth.inflight + depth.ready;
      checks++;
      if (waiting === 0) empty++;
      const n = Math.min(batch, backlog - waiting);
      if (n <= 0) {
        await sleep(1);
        continue;
      }
      const base = created;
      created += n;
      await createJobs(d.jobs, n, d.o.createConcurrency, (i) => ({ name: `t${base + i}`, schedule: { kind: "ONCE", at: Date.now() }, spec: specOf(d) }));
    }
    cpu1 = d.cpu.snap();
    const ops1 = await d.ops.snap();
    cpu0 ??= cpu1;
    ops0 ??= ops1;
    notes.push(...(await d.cluster.stopRoles()));

    const runs = (await d.mongo.c.runs
      .find({ startedAt: { $gte: new Date(windowStart), $lt: new Date(windowEnd) } }, { projection: RUN_FIELDS })
      .toArray()) as RunTimes[];
    notes.push(`producer created ${created} jobs; pipeline found empty at ${empty}/${checks} checks`);
    if (d.receiver) {
      const failed = await d.mongo.c.runs.countDocuments({ status: { $in: ["FAILED", "DEAD", "TIMED_OUT"] } });
      const l = summarize(d.receiver.latencies);
      notes.push(`HTTP: fire → request at the receiver (Kairos-Scheduled-For to arrival), all ${d.receiver.latencies.length} requests: p50 ${fmtMs(l.p50)}, p95 ${fmtMs(l.p95)}, p99 ${fmtMs(l.p99)}, max ${fmtMs(l.max)}; runs failed: ${failed}`);
    }
    notes.push(`${d.ops.line(ops0, ops1, runs.length, ["zcard", "zcount"])} — over the window, job creation included, the producer's ZCARD and ZCOUNT checks left out`);
    return {
      system: "kairos",
      variant: VARIANT[d.o.mode],
      workers: schedulers,
      runs: runs.length,
      seconds,
      perSecond: runs.length / seconds,
      lateness: summarize(runs.map((r) => r.startedAt!.getTime() - r.scheduledFor.getTime())),
      stages: stagesOf(runs),
      cpu: d.cpu.line(cpu0, cpu1),
      settings: { ...settingsOf(d, schedulers), backlog, producer: `JobService.create ONCE at now, ≤${batch} per top-up, bench process` },
      notes,
    };
  } finally {
    notes.push(...(await teardown(d)));
  }
}

// ---------------------------------------------------------------------------------------------
// Standalone
// ---------------------------------------------------------------------------------------------


async function main(): Promise<void> {
  const quick = process.argv.includes("--quick");
  const shapes = (argValue("--shapes") ?? "burst,schedules,throughput").split(",");
  const modes = (argValue("--modes") ?? "process,noop").split(",") as ExecutorMode[];
  const base: KairosOptions = { cpuProfDir: argValue("--profile"), verbose: process.argv.includes("--verbose"), runtime: (argValue("--runtime") ?? "compiled") as Runtime };
  // --alert-rules N [--alert-deadlines M]: the cost of alerts (issue #31), N rules of which M on deadlines.
  if (argValue("--alert-rules")) base.alertRules = { count: Number(argValue("--alert-rules")), deadlines: Number(argValue("--alert-deadlines") ?? 0) };
  const redis = await startRedis();
  const t0 = Date.now();
  console.log(`Kairos ${kairosRevision()} benchmarks${quick ? " (--quick)" : ""} — redis ${redis.url} (private), load ${loadavg().map((l) => l.toFixed(2)).join(" ")}\n`);
  try {
    if (shapes.includes("burst")) {
      const rs: KairosBurstResult[] = [];
      for (const mode of modes) rs.push(await benchKairosBurst(redis.url, { ...base, mode, jobs: quick ? 5_000 : 20_000 }));
      console.log([formatBurst(rs), formatStages(rs), extraRatioLines(rs, burstRatios)].filter(Boolean).join("\n") + "\n");
    }
    if (shapes.includes("schedules")) {
      const rs: KairosScheduleResult[] = [];
      for (const mode of modes) rs.push(await benchKairosSchedules(redis.url, { ...base, mode, seconds: quick ? 10 : 60 }));
      console.log([formatSchedules(rs), formatStages(rs), extraRatioLines(rs, scheduleRatios)].filter(Boolean).join("\n") + "\n");
    }
    if (shapes.includes("throughput")) {
      const rs: KairosThroughputResult[] = [];
      for (const mode of modes) {
        for (const schedulers of [1, 2] as const) rs.push(await benchKairosThroughput(redis.url, { ...base, mode, schedulers, seconds: quick ? 5 : 20 }));
      }
      console.log([formatThroughput(rs), formatStages(rs)].join("\n") + "\n");
    }
  } finally {
    await redis.stop();
  }
  console.log(`total ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => process.exit(130)); // 'exit' hooks kill the children
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
