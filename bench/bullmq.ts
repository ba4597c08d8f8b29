/**
 * The BullMQ side of issue #5's benchmarks, on the same three shapes as Kairos (bench/lib/shapes.ts):
 *
 *   (1) burst       — N delayed jobs all due at the same instant T, a no-op processor;
 *   (2) schedulers  — S job schedulers repeating every second, for D seconds;
 *   (3) throughput  — a producer keeps the queue fed with immediate jobs; 1 or 2 Worker processes.
 *
 * Every Worker runs in its own process (bench/lib/bullmq-worker.ts, forked with tsx); the Queue
 * (producer / scheduler upserts) runs in this process. Each run uses a fresh queue name and
 * obliterates it afterwards. Every wait is bounded in time.
 *
 * Run directly:  node --import tsx bench/bullmq.ts [--quick]
 * (starts its own redis-server on a free loopback port and stops it at the end).
 */
import { fork, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { availableParallelism, cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { Queue } from "bullmq";
import { redisConnectionOptions, startRedis } from "./lib/redis.js";
import { formatBurst, formatSchedules, formatThroughput } from "./lib/report.js";
import type { BurstResult, ScheduleResult, ThroughputResult } from "./lib/shapes.js";
import { fmtMs, summarize } from "./lib/stats.js";
import { workerOptions, type WorkerConfig, type WorkerSamples } from "./lib/bullmq-worker.js";

const BULLMQ_VERSION = "5.47.3"; // package.json devDependency (pinned)
const WORKER_SCRIPT = fileURLToPath(new URL("./lib/bullmq-worker.ts", import.meta.url));
const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** Rejects after `ms` without keeping the process alive (for races against a bounded wait). */
const failAfter = (ms: number, message: string) =>
  new Promise<never>((_, reject) => setTimeout(() => reject(new Error(message)), ms).unref());

function uniqueQueueName(shape: string): string {
  return `bench-${shape}-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
}

function queueFor(redisUrl: string, name: string): Queue {
  return new Queue(name, { connection: { ...redisConnectionOptions(redisUrl), maxRetriesPerRequest: null } });
}

async function disposeQueue(queue: Queue): Promise<void> {
  try {
    await queue.obliterate({ force: true });
  } catch (e) {
    console.error(`[bullmq bench] obliterate ${queue.name} failed: ${(e as Error).message}`);
  }
  await queue.close();
}

// ---------------------------------------------------------------------------------------------
// Worker processes
// ---------------------------------------------------------------------------------------------

/** One forked Worker process (see bench/lib/bullmq-worker.ts for the protocol). */
class WorkerProcess {
  started = 0;
  private result?: Promise<WorkerSamples>;
  private constructor(
    private readonly child: ChildProcess,
    private readonly failed: Promise<never>,
  ) {}

  static async start(config: WorkerConfig, timeoutMs = 30_000): Promise<WorkerProcess> {
    const child = fork(WORKER_SCRIPT, [], {
      cwd: REPO_ROOT,
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    let onFail!: (e: Error) => void;
    const failed = new Promise<never>((_, reject) => (onFail = reject));
    failed.catch(() => {}); // observed via races below
    const wp = new WorkerProcess(child, failed);
    child.on("message", (m: { ev?: string; started?: number; message?: string }) => {
      if (m?.ev === "progress" && typeof m.started === "number") wp.started = m.started;
      if (m?.ev === "error") onFail(new Error(`bullmq worker process failed: ${m.message}`));
    });
    child.once("exit", (code, signal) => onFail(new Error(`bullmq worker process exited (code ${code}, signal ${signal})`)));
    child.once("error", (e) => onFail(e));
    const ready = new Promise<void>((resolve) => child.on("message", (m: { ev?: string }) => m?.ev === "ready" && resolve()));
    child.send({ cmd: "start", config });
    try {
      await Promise.race([ready, failed, failAfter(timeoutMs, "bullmq worker process not ready in time")]);
    } catch (e) {
      wp.kill();
      throw e;
    }
    return wp;
  }

  /** Ask the Worker to close (it finishes active no-op jobs) and return its samples. */
  stop(timeoutMs = 30_000): Promise<WorkerSamples> {
    this.result ??= (async () => {
      const got = new Promise<WorkerSamples>((resolve) =>
        this.child.on("message", (m: { ev?: string; samples?: WorkerSamples }) => m?.ev === "result" && resolve(m.samples!)),
      );
      this.child.send({ cmd: "stop" });
      try {
        return await Promise.race([
          got,
          this.failed,
          failAfter(timeoutMs, "bullmq worker process did not stop in time"),
        ]);
      } finally {
        // It exits by itself after sending the result; make sure.
        setTimeout(() => this.kill(), 2_000).unref();
      }
    })();
    return this.result;
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
  }
}

function mergeSamples(all: WorkerSamples[]): WorkerSamples {
  const out: WorkerSamples = { startedAt: [], dueAt: [], unknownDue: 0 };
  for (const s of all) {
    for (let i = 0; i < s.startedAt.length; i++) {
      out.startedAt.push(s.startedAt[i]!);
      out.dueAt.push(s.dueAt[i]!);
    }
    if (s.keys) (out.keys ??= []).push(...s.keys);
    out.unknownDue += s.unknownDue;
  }
  return out;
}

function commonSettings(concurrency: number, workers: number): Record<string, string | number> {
  return {
    bullmq: BULLMQ_VERSION,
    "worker processes": workers,
    concurrency,
    removeOnComplete: "{count:1000}",
  };
}

// ---------------------------------------------------------------------------------------------
// (1) burst
// ---------------------------------------------------------------------------------------------

export interface BurstOptions {
  /** Delayed jobs to create. @default 20_000 */
  jobs?: number;
  /** T = now + leadMs; adding must finish before T. @default 5_000 */
  leadMs?: number;
  /** Worker concurrency. @default 50 */
  concurrency?: number;
  /** addBulk chunk size. @default 1_000 */
  chunk?: number;
  /** Give up waiting for starts this long after T. @default 120_000 */
  timeoutMs?: number;
}

/**
 * (1) `jobs` delayed jobs all due at T = now + leadMs (each job's `timestamp` and `delay` are set so
 * that timestamp + delay = T exactly), added with `Queue.addBulk` in chunks while one Worker process
 * (concurrency `concurrency`) is already running; the processor is a no-op that records its start.
 */
export async function benchBullmqBurst(redisUrl: string, opts: BurstOptions = {}): Promise<BurstResult> {
  const { jobs = 20_000, leadMs = 5_000, concurrency = 50, chunk = 1_000, timeoutMs = 120_000 } = opts;
  const queue = queueFor(redisUrl, uniqueQueueName("burst"));
  await queue.waitUntilReady();
  const worker = await WorkerProcess.start({ redisUrl, queue: queue.name, concurrency, kind: "burst" });
  const notes: string[] = [];
  try {
    const T = Date.now() + leadMs;
    const addStart = Date.now();
    for (let i = 0; i < jobs; i += chunk) {
      const now = Date.now();
      if (now >= T) throw new Error(`burst: adding ${jobs} jobs did not finish before T (${i} added in ${now - addStart} ms); raise leadMs`);
      const n = Math.min(chunk, jobs - i);
      const batch = new Array(n);
      for (let j = 0; j < n; j++) batch[j] = { name: "noop", data: { due: T }, opts: { timestamp: now, delay: T - now } };
      await queue.addBulk(batch);
    }
    const addMs = Date.now() - addStart;
    if (Date.now() >= T) throw new Error(`burst: adding took ${addMs} ms, past T (leadMs ${leadMs}); raise leadMs`);

    const deadline = T + timeoutMs;
    while (worker.started < jobs && Date.now() < deadline) await sleep(50);
    if (worker.started < jobs) notes.push(`gave up ${fmtMs(timeoutMs)} after T with ${worker.started}/${jobs} started`);
    const s = await worker.stop();
    if (s.unknownDue) notes.push(`${s.unknownDue} jobs without a due instant`);
    const lateness = s.startedAt.map((t, i) => t - s.dueAt[i]!);
    let first = Infinity;
    let last = -Infinity;
    for (const t of s.startedAt) {
      if (t < first) first = t;
      if (t > last) last = t;
    }
    return {
      system: "bullmq",
      jobs,
      started: s.startedAt.length,
      dueAt: T,
      leadMs,
      addMs,
      allStartedMs: s.startedAt.length ? last - T : Number.NaN,
      firstStartedMs: s.startedAt.length ? first - T : Number.NaN,
      lateness: summarize(lateness),
      settings: { ...commonSettings(concurrency, 1), "delayed jobs via": `addBulk×${chunk}` },
      notes,
    };
  } finally {
    worker.kill();
    await disposeQueue(queue);
  }
}

// ---------------------------------------------------------------------------------------------
// (2) job schedulers
// ---------------------------------------------------------------------------------------------

export interface SchedulerOptions {
  /** Job schedulers to create. @default 1_000 */
  schedules?: number;
  /** Measurement window (s). @default 60 */
  seconds?: number;
  /** Worker concurrency. @default 50 */
  concurrency?: number;
  /**
   * `every`: `{ every: 1000 }`, BullMQ's documented "every second" (each scheduler's phase is the
   * millisecond it was created at, like a Kairos INTERVAL schedule with the default startAt = now).
   * `pattern`: `{ pattern: "* * * * * *" }`, cron with seconds: all schedulers fire on the same
   * second boundary. @default "every"
   */
  form?: "every" | "pattern";
  /** After the window closes, wait this long for late fires of in-window slots. @default 3_000 */
  graceMs?: number;
}

/**
 * (2) `schedules` job schedulers (`Queue.upsertJobScheduler`) that repeat every second, one Worker
 * process. Only fires whose slot lies in [windowStart, windowStart + seconds·1000) are counted;
 * windowStart is the second boundary at least 1 s after the last upsert returned.
 */
export async function benchBullmqSchedulers(redisUrl: string, opts: SchedulerOptions = {}): Promise<ScheduleResult> {
  const { schedules = 1_000, seconds = 60, concurrency = 50, form = "every", graceMs = 3_000 } = opts;
  const queue = queueFor(redisUrl, uniqueQueueName("sched"));
  await queue.waitUntilReady();
  const worker = await WorkerProcess.start({ redisUrl, queue: queue.name, concurrency, kind: "scheduler" });
  const notes: string[] = [];
  try {
    const repeat = form === "every" ? { every: 1_000 } : { pattern: "* * * * * *" };
    const upsertStart = Date.now();
    const parallel = 50;
    for (let i = 0; i < schedules; i += parallel) {
      const ids = Array.from({ length: Math.min(parallel, schedules - i) }, (_, j) => `s${i + j}`);
      await Promise.all(ids.map((id) => queue.upsertJobScheduler(id, repeat, { name: "tick", data: {} })));
    }
    const upsertMs = Date.now() - upsertStart;
    const windowStart = Math.ceil((Date.now() + 1_000) / 1_000) * 1_000;
    const windowEnd = windowStart + seconds * 1_000;
    await sleep(windowEnd + graceMs - Date.now());
    const s = await worker.stop();

    const lateness: number[] = [];
    const seen = new Set<string>();
    let duplicates = 0;
    for (let i = 0; i < s.startedAt.length; i++) {
      const due = s.dueAt[i]!;
      if (due < windowStart || due >= windowEnd) continue;
      const key = s.keys![i]!;
      if (seen.has(key)) {
        duplicates++;
        continue;
      }
      seen.add(key);
      lateness.push(s.startedAt[i]! - due);
    }
    if (s.unknownDue) notes.push(`${s.unknownDue} jobs without a scheduler slot`);
    notes.push(`upserting ${schedules} schedulers took ${fmtMs(upsertMs)}`);
    return {
      system: "bullmq",
      variant: form,
      schedules,
      durationMs: windowEnd - windowStart,
      windowStart,
      fires: seen.size,
      expectedFires: schedules * seconds,
      duplicates,
      lateness: summarize(lateness),
      settings: { ...commonSettings(concurrency, 1), repeat: form === "every" ? "{every:1000}" : "{pattern:'* * * * * *'}" },
      notes,
    };
  } finally {
    worker.kill();
    await disposeQueue(queue);
  }
}

// ---------------------------------------------------------------------------------------------
// (3) throughput
// ---------------------------------------------------------------------------------------------

export interface ThroughputOptions {
  /** Worker processes. @default 1 */
  workers?: 1 | 2;
  /** Measurement window (s). @default 20 */
  seconds?: number;
  /** Concurrency of each Worker. @default 50 */
  concurrency?: number;
  /**
   * The producer tops the wait list up to this many jobs whenever it is below (so the Workers never
   * starve, and start − add stays bounded by backlog ÷ rate instead of growing for the whole run).
   * @default 4 × concurrency × workers
   */
  backlog?: number;
  /** Largest addBulk. @default 500 */
  batch?: number;
  /** Production runs this long before the window opens. @default 1_000 */
  warmupMs?: number;
}

/**
 * (3) One producer (this process, `Queue.addBulk` of immediate jobs, keeping about `backlog` jobs
 * waiting) and `workers` Worker processes. Counts the jobs whose processor started inside the
 * window; lateness = start − the job's `timestamp` (creation in the producer).
 */
export async function benchBullmqThroughput(redisUrl: string, opts: ThroughputOptions = {}): Promise<ThroughputResult> {
  const { workers = 1, seconds = 20, concurrency = 50, batch = 500, warmupMs = 1_000 } = opts;
  const backlog = opts.backlog ?? 4 * concurrency * workers;
  const queue = queueFor(redisUrl, uniqueQueueName(`tput${workers}`));
  await queue.waitUntilReady();
  const procs = await Promise.all(
    Array.from({ length: workers }, () => WorkerProcess.start({ redisUrl, queue: queue.name, concurrency, kind: "throughput" })),
  );
  const notes: string[] = [];
  try {
    const windowStart = Date.now() + warmupMs;
    const windowEnd = windowStart + seconds * 1_000;
    let added = 0;
    let starvedChecks = 0;
    let checks = 0;
    while (Date.now() < windowEnd) {
      const waiting = await queue.getWaitingCount();
      checks++;
      if (waiting === 0) starvedChecks++;
      const n = Math.min(batch, backlog - waiting);
      if (n <= 0) {
        await sleep(1);
        continue;
      }
      const jobs = new Array(n);
      for (let j = 0; j < n; j++) jobs[j] = { name: "noop", data: {} };
      await queue.addBulk(jobs);
      added += n;
    }
    const s = mergeSamples(await Promise.all(procs.map((p) => p.stop())));
    const lateness: number[] = [];
    for (let i = 0; i < s.startedAt.length; i++) {
      const t = s.startedAt[i]!;
      if (t >= windowStart && t < windowEnd) lateness.push(t - s.dueAt[i]!);
    }
    notes.push(`producer added ${added} jobs; wait list found empty at ${starvedChecks}/${checks} checks`);
    return {
      system: "bullmq",
      workers,
      runs: lateness.length,
      seconds,
      perSecond: lateness.length / seconds,
      lateness: summarize(lateness),
      settings: { ...commonSettings(concurrency, workers), backlog, producer: `addBulk≤${batch}, same process as Queue` },
      notes,
    };
  } finally {
    for (const p of procs) p.kill();
    await disposeQueue(queue);
  }
}

// ---------------------------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------------------------

export function machineLine(): string {
  const c = cpus();
  return `${availableParallelism()} cores (${c[0]?.model.trim() ?? "?"}), load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}, node ${process.version}`;
}

async function main(): Promise<void> {
  const quick = process.argv.includes("--quick");
  const redis = await startRedis();
  const t0 = Date.now();
  console.log(`BullMQ ${BULLMQ_VERSION} benchmarks${quick ? " (--quick)" : ""} — redis ${redis.url} (private), ${machineLine()}`);
  console.log(`worker options: ${JSON.stringify({ ...workerOptions({ redisUrl: redis.url, queue: "", concurrency: 50, kind: "burst" }), connection: "…" })}\n`);
  try {
    const burst = await benchBullmqBurst(redis.url, quick ? { jobs: 5_000 } : {});
    console.log(formatBurst([burst]) + "\n");

    const seconds = quick ? 10 : 60;
    const every = await benchBullmqSchedulers(redis.url, { seconds, form: "every" });
    const pattern = await benchBullmqSchedulers(redis.url, { seconds: quick ? 10 : 30, form: "pattern" });
    console.log(formatSchedules([every, pattern]) + "\n");

    const tputSeconds = quick ? 5 : 20;
    const t1 = await benchBullmqThroughput(redis.url, { workers: 1, seconds: tputSeconds });
    const t2 = await benchBullmqThroughput(redis.url, { workers: 2, seconds: tputSeconds });
    console.log(formatThroughput([t1, t2]) + "\n");
  } finally {
    await redis.stop();
  }
  console.log(`total ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
