/**
 * (4) DAG fan-out / fan-in (issue #15): the same wide workflow on both systems, no-op tasks.
 *
 * Shape (`--shape`): the issue asks for 1 → 1,000 → 1, which as a static DAG is 1,002 tasks, past
 * the cap of 1,000 tasks (MAX_DAG_TASKS). So the default, `mapped`, is the fan-out Kairos offers for
 * that width: `root` (whose result is the list [0 … 999]) → `c` mapped over it (1,000 instances at
 * run time, MAX_MAP_INSTANCES) → `join`; `static` is `root → c0 … c997 → join` (998 middle tasks, a
 * DAG of exactly 1,000 tasks). BullMQ gets as many children as Kairos's middle; `--children N`
 * changes the width.
 *
 * - Kairos: a DAG `root → c0 … c997 → join` (1 → 998 → 1) created once through the GraphQL API
 *   (`createDag`), then triggered `rounds` times, one DAG run after the other (`triggerDag`), each
 *   waited for (`dagRun { status }`) and then read (`dagRun { tasks(first, after) { edges { node { key status run {
 *   startedAt finishedAt } } } } }`, page by page). Every task is a COMMAND `argv: ["true"]`; the deployment is the one of the
 *   other shapes (bench/lib/kairos-cluster.ts) plus one `api` process, with one executor of 128
 *   slots against BullMQ's one Worker process (DAG_EXECUTORS); executors run real processes or,
 *   in `noop` mode, none (bench/lib/noop-process-hooks.mjs).
 * - BullMQ: a flow (`FlowProducer.add`) whose parent `join` waits for 998 no-op children — the
 *   fan-in BullMQ offers (a job has one parent, so there is no `root` whose end releases 1,000
 *   jobs); one Worker process (bench/lib/bullmq-flow-worker.ts), concurrency 50, the options of the
 *   other BullMQ benches.
 *
 * Figures per round, then p50 / p99 (nearest rank) over the rounds:
 * - submit → last child start: from the client's call (`triggerDag` / `FlowProducer.add`) to the
 *   start of the last of the middle tasks. For Kairos this includes the `root` task's run.
 * - last child end → join start: from the end of the last middle task to the start of the join,
 *   the fan-in latency.
 * - (Kairos) root end → last child start: the fan-out alone.
 * Start and end are as in the other benches: Kairos `run.startedAt` (the executor claimed the run)
 * and `run.finishedAt`; BullMQ `Date.now()` at the first and last statement of the processor.
 *
 * Run directly:  node --import tsx bench/dag.ts [--quick] [--systems kairos,bullmq] [--modes noop,process]
 *                [--shape mapped|static] [--rounds N] [--children N] [--timeout-s S (per round, default 300)] [--verbose] [--profile DIR]
 *                [--executors N (default 1)] [--slots N (per executor, default 128)]
 * --verbose also prints, per round, when the middle tasks' runs were created, queued, started and
 * finished, and the Redis commands and MongoDB operations per task (the bench's own polls included).
 */
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { kairosRevision, type ExecutorMode, type KairosOptions } from "./kairos.js";
import { bullmqFlowSamples } from "./lib/bullmq-flows.js";
import { buildKairos, KairosCluster, startEmulatorProcess, type Runtime } from "./lib/kairos-cluster.js";
import { diffCounts, mongoOpCounts, perRun, redisCommandCounts, REDIS_HOUSEKEEPING, type Counts } from "./lib/opcounts.js";
import { startRedis } from "./lib/redis.js";
import { fmtMs, ratio, summarize, table, type Summary } from "./lib/stats.js";
import { argValue } from "./lib/args.js";

/**
 * One executor process against BullMQ's one Worker process. The other shapes run two executors of
 * 64 slots; on this shape, on a 2-core machine that also runs the emulator, the API, a scheduler
 * and Redis, a second executor process only competes for the same cores: one of 128 slots started
 * the 1,000 children ~1.5× sooner (482 / 485 ms against 723 / 816 ms, p50 of 5 rounds, interleaved;
 * docs/benchmarks.md). Two executors stay one flag away (--executors 2 --slots 64).
 */
const DAG_EXECUTORS = 1;
const DAG_SLOTS = 128;

const ADMIN_PASSWORD = "bench-admin-password";
/** As bench/kairos.ts: a real program that does nothing, asking for what `true` needs. */
const NOOP_SPEC = { kind: "COMMAND", argv: ["true"], resources: { cpu: 0.1, memoryMb: 16, pids: 16, diskMb: 1 } };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** Static shape's middle tasks by default: root + 998 + join = 1,000 tasks, the most a DAG may have. */
export const DAG_BENCH_CHILDREN = 998;
/** Mapped shape's instances by default: the issue's 1,000. */
export const DAG_BENCH_MAPPED = 1_000;

/** `mapped`: root → c (mapOver root) → join; `static`: root → c0 … cN-1 → join. */
export type DagShape = "mapped" | "static";

/** The middle's width of a shape when not given. */
export const defaultChildren = (shape: DagShape): number => (shape === "mapped" ? DAG_BENCH_MAPPED : DAG_BENCH_CHILDREN);

/** One DAG run / flow. */
export interface DagRound {
  toLastChildStartMs: number;
  joinDelayMs: number;
  /** Kairos only: root's end → last child's start. */
  fanOutMs: number | null;
  /** submit → join's end. */
  totalMs: number;
}

export interface DagBenchResult {
  system: "kairos" | "bullmq";
  variant?: string;
  /** Kairos only: the DAG's shape. */
  shape?: DagShape;
  children: number;
  rounds: DagRound[];
  toLastChildStart: Summary;
  joinDelay: Summary;
  fanOut: Summary | null;
  total: Summary;
  notes: string[];
}

function result(system: DagBenchResult["system"], variant: string | undefined, children: number, rounds: DagRound[], notes: string[], shape?: DagShape): DagBenchResult {
  const fanOuts = rounds.map((r) => r.fanOutMs).filter((x): x is number => x !== null);
  return {
    system,
    variant,
    ...(shape ? { shape } : {}),
    children,
    rounds,
    toLastChildStart: summarize(rounds.map((r) => r.toLastChildStartMs)),
    joinDelay: summarize(rounds.map((r) => r.joinDelayMs)),
    fanOut: fanOuts.length ? summarize(fanOuts) : null,
    total: summarize(rounds.map((r) => r.totalMs)),
    notes,
  };
}

// ---------------------------------------------------------------------------------------------
// BullMQ: FlowProducer, a parent waiting for its children
// ---------------------------------------------------------------------------------------------

export interface DagBenchOptions {
  /** Middle tasks. @default defaultChildren(shape): 1,000 mapped, 998 static */
  children?: number;
  /** Kairos's DAG. @default "mapped" */
  shape?: DagShape;
  /** DAG runs / flows, one after the other. @default 5 */
  rounds?: number;
  /** Give up on a round after this long. @default 300_000 */
  timeoutMs?: number;
}

/** The BullMQ side: `rounds` flows of a join waiting for `children` no-op children. */
export async function benchBullmqDag(redisUrl: string, opts: DagBenchOptions = {}): Promise<DagBenchResult> {
  const { children = defaultChildren(opts.shape ?? "mapped"), rounds = 5, timeoutMs = 300_000 } = opts;
  const submits: number[] = [];
  const samples = await bullmqFlowSamples(redisUrl, "dag", async ({ queueName, run }) => {
    for (let round = 0; round < rounds; round++) {
      submits.push(Date.now());
      const kids = Array.from({ length: children }, (_, i) => ({ name: `c${i}`, queueName, data: { round, role: "child" } }));
      await run(round, { name: "join", queueName, data: { round, role: "join" }, children: kids }, timeoutMs);
    }
  });
  const out: DagRound[] = [];
  for (let round = 0; round < rounds; round++) {
    const mine = samples.filter((s) => s.round === round);
    const kids = mine.filter((s) => s.role === "child");
    const join = mine.find((s) => s.role === "join");
    if (kids.length !== children || !join) throw new Error(`BullMQ flow ${round}: ${kids.length} children and ${join ? 1 : 0} join processed`);
    out.push({
      toLastChildStartMs: Math.max(...kids.map((k) => k.start)) - submits[round]!,
      joinDelayMs: join.start - Math.max(...kids.map((k) => k.end)),
      fanOutMs: null,
      totalMs: join.end - submits[round]!,
    });
  }
  return result("bullmq", undefined, children, out, []);
}


// ---------------------------------------------------------------------------------------------
// Kairos: createDag / triggerDag / dagRun over GraphQL
// ---------------------------------------------------------------------------------------------

export interface KairosDagOptions extends DagBenchOptions, KairosOptions {}

interface RunTask {
  key: string;
  mapIndex: number | null;
  status: string;
  run: { startedAt: string | null; finishedAt: string | null } | null;
}

/** A GraphQL call; throws with the server's messages on an error. */
export async function gql<T>(url: string, query: string, variables: Record<string, unknown>, token?: string): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: Array<{ message: string; extensions?: { code?: string } }> };
  if (body.errors?.length || !body.data) {
    throw new Error(`GraphQL ${res.status}: ${(body.errors ?? []).map((e) => `${e.extensions?.code ?? "?"}: ${e.message}`).join("; ") || "no data"}`);
  }
  return body.data;
}

/** The 1 → N → 1 DAG as `createDag`'s input. */
export function wideDag(name: string, children: number, shape: DagShape = "static"): Record<string, unknown> {
  if (shape === "mapped") {
    const list = JSON.stringify(Array.from({ length: children }, (_, i) => i));
    return {
      name,
      tasks: [
        // A no-op whose result is the list (bench/lib/noop-process.mjs; a real process in process mode).
        { key: "root", spec: { ...NOOP_SPEC, argv: ["/bin/sh", "-c", 'printf %s "$BENCH_RESULT" > "$KAIROS_RESULT"'], env: { BENCH_RESULT: list } }, dependsOn: [] },
        { key: "c", spec: NOOP_SPEC, dependsOn: ["root"], mapOver: "root" },
        { key: "join", spec: NOOP_SPEC, dependsOn: ["c"] },
      ],
    };
  }
  const middle = Array.from({ length: children }, (_, i) => `c${i}`);
  return {
    name,
    tasks: [
      { key: "root", spec: NOOP_SPEC, dependsOn: [] },
      ...middle.map((key) => ({ key, spec: NOOP_SPEC, dependsOn: ["root"] })),
      { key: "join", spec: NOOP_SPEC, dependsOn: middle },
    ],
  };
}

/** The Kairos side: one deployment, one DAG, `rounds` DAG runs one after the other. */
export async function benchKairosDag(redisUrl: string, opts: KairosDagOptions = {}): Promise<DagBenchResult> {
  const shape = opts.shape ?? "mapped";
  const { children = defaultChildren(shape), rounds = 5, timeoutMs = 300_000 } = opts;
  const mode: ExecutorMode = opts.mode ?? "noop";
  const runtime: Runtime = opts.runtime ?? "compiled";
  const notes: string[] = [];
  if (runtime === "compiled") {
    const warning = await buildKairos();
    if (warning) notes.push(warning);
  }
  const emu = opts.mongoUrl ? null : await startEmulatorProcess({ runtime, cpuProfDir: opts.cpuProfDir });
  const tag = `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const cluster = new KairosCluster({
    mongoUrl: opts.mongoUrl ?? emu!.uri,
    redisUrl,
    mongoDb: `bench_dag_${tag}`,
    prefix: `bench-dag-${tag}`,
    shards: opts.shards ?? 64,
    stageAheadMs: opts.stageAheadMs ?? 10_000,
    cpuProfDir: opts.cpuProfDir,
    runtime,
  });
  const out: DagRound[] = [];
  try {
    await Promise.all([cluster.startExecutors(opts.executors ?? DAG_EXECUTORS, opts.slots ?? DAG_SLOTS, { noop: mode === "noop" }), cluster.startSchedulers(1)]);
    // One trigger of a 1,000-task DAG is 1,000 submissions to the rate limit (120 a minute by default): off here, the engine is measured, not admission.
    const url = await cluster.startApi(ADMIN_PASSWORD, { KAIROS_RATE_SUBMISSIONS: "off" });
    const { login } = await gql<{ login: { token: string } }>(url, `mutation($p: String!) { login(username: "admin", password: $p) { token } }`, { p: ADMIN_PASSWORD });
    const token = login.token;
    const { createDag } = await gql<{ createDag: { id: string } }>(
      url,
      `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`,
      { input: wideDag(`wide-${tag}`, children, shape) },
      token,
    );
    const meter = opts.verbose ? await OpMeter.open(redisUrl, opts.mongoUrl ?? emu!.uri, `bench_dag_${tag}`) : null;
    for (let round = 0; round < rounds; round++) {
      const before = await meter?.snap();
      const submit = Date.now();
      const { triggerDag } = await gql<{ triggerDag: { id: string } }>(url, `mutation($id: ID!) { triggerDag(id: $id) { id } }`, { id: createDag.id }, token);
      const deadline = submit + timeoutMs;
      let status = "RUNNING";
      let lastReport = Date.now();
      while (status === "RUNNING" || status === "QUEUED") {
        if (Date.now() > deadline) {
          const counts = await taskCounts(url, triggerDag.id, token);
          throw new Error(`Kairos DAG run ${round} still ${status} after ${timeoutMs} ms; tasks: ${counts}`);
        }
        await sleep(100);
        status = (await gql<{ dagRun: { status: string } }>(url, `query($id: ID!) { dagRun(id: $id) { status } }`, { id: triggerDag.id }, token)).dagRun.status;
        if (opts.verbose && Date.now() - lastReport > 5_000) {
          lastReport = Date.now();
          process.stderr.write(`[dag bench] round ${round} +${fmtMs(Date.now() - submit)}: ${await taskCounts(url, triggerDag.id, token)}\n`);
        }
      }
      const dagRun = { status, tasks: await taskRows<RunTask>(url, triggerDag.id, token, "key mapIndex status run { startedAt finishedAt }") };
      if (dagRun.status !== "SUCCEEDED") {
        const why = { tasks: await taskRows<{ key: string; status: string; note: string | null; run: { status: string; error: string | null } | null }>(url, triggerDag.id, token, "key status note run { status error }") };
        const bad = why.tasks.filter((t) => t.status !== "SUCCEEDED").slice(0, 3);
        throw new Error(`Kairos DAG run ${round} ended ${dagRun.status}; e.g. ${JSON.stringify(bad)}`);
      }
      out.push(kairosRound(dagRun.tasks, submit, children));
      if (opts.verbose) process.stderr.write(await timeline(url, triggerDag.id, token, submit));
      if (meter && before) process.stderr.write(`[dag bench] round ${round}: ${meter.line(before, await meter.snap(), children + 2)}\n`);
    }
    await meter?.close();
    notes.push(...(await cluster.stopRoles()));
  } finally {
    await cluster.stop().catch((e: Error) => notes.push(`cleanup: ${e.message}`));
    await emu?.child.stop();
  }
  return result("kairos", mode === "noop" ? "no process" : "process", children, out, notes, shape);
}

/** --verbose: Redis commands and MongoDB operations per task over a round (bench/lib/opcounts.ts; the bench's own status polls included). */
class OpMeter {
  private constructor(
    private readonly redis: import("ioredis").Redis,
    private readonly client: import("mongodb").MongoClient,
    private readonly db: string,
  ) {}

  static async open(redisUrl: string, mongoUrl: string, db: string): Promise<OpMeter> {
    const { createRedisClient } = await import("../src/shared-state/index.js");
    const { MongoClient } = await import("mongodb");
    const client = new MongoClient(mongoUrl);
    await client.connect();
    return new OpMeter(createRedisClient(redisUrl) as import("ioredis").Redis, client, db);
  }

  async snap(): Promise<{ redis: Counts; mongo: Counts }> {
    const [redis, mongo] = await Promise.all([redisCommandCounts(this.redis), mongoOpCounts(this.client.db(this.db))]);
    return { redis, mongo };
  }

  line(a: { redis: Counts; mongo: Counts }, b: { redis: Counts; mongo: Counts }, tasks: number): string {
    return `per task: ${perRun("MongoDB ops", diffCounts(a.mongo, b.mongo), tasks)}; ${perRun("Redis commands", diffCounts(a.redis, b.redis), tasks, REDIS_HOUSEKEEPING)}`;
  }

  async close(): Promise<void> {
    this.redis.disconnect();
    await this.client.close();
  }
}

/** Every task row of a DAG run, in pages of 500 (the API's query cost limit bounds a page), each after the last one's end cursor. */
async function taskRows<T>(url: string, dagRunId: string, token: string, fields: string): Promise<T[]> {
  const rows: T[] = [];
  for (let after: string | null = null; ; ) {
    type Page = { edges: Array<{ node: T }>; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
    const q = `query($id: ID!, $after: String) { dagRun(id: $id) { tasks(first: 500, after: $after) { edges { node { ${fields} } } pageInfo { hasNextPage endCursor } } } }`;
    const { dagRun }: { dagRun: { tasks: Page } } = await gql<{ dagRun: { tasks: Page } }>(url, q, { id: dagRunId, after }, token);
    rows.push(...dagRun.tasks.edges.map((e) => e.node));
    if (!dagRun.tasks.pageInfo.hasNextPage) return rows;
    after = dagRun.tasks.pageInfo.endCursor;
  }
}

/** --verbose: when the middle tasks' runs were created, queued, started and finished, from the root's end (quantiles). */
async function timeline(url: string, dagRunId: string, token: string, submit: number): Promise<string> {
  type T = { key: string; mapIndex: number | null; run: { createdAt: string; queuedAt: string | null; startedAt: string | null; finishedAt: string | null } | null };
  const dagRun = { tasks: await taskRows<T>(url, dagRunId, token, "key mapIndex run { createdAt queuedAt startedAt finishedAt }") };
  const root = dagRun.tasks.find((t) => t.key === "root")?.run;
  const join = dagRun.tasks.find((t) => t.key === "join")?.run;
  const base = root?.finishedAt ? Date.parse(root.finishedAt) : submit;
  const middle = dagRun.tasks.filter(isMiddle).map((t) => t.run!);
  const q = (field: "createdAt" | "queuedAt" | "startedAt" | "finishedAt") => {
    const xs = middle.map((r) => (r[field] ? Date.parse(r[field]) - base : NaN)).filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
    const at = (p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? NaN;
    return `${field} ${[0, 0.1, 0.5, 0.9, 1].map((p) => `${at(p)}`).join("/")}`;
  };
  const rel = (s: string | null | undefined) => (s ? `${Date.parse(s) - base}` : "?");
  return (
    `[dag bench] timeline from the root's end (root: created ${rel(root?.createdAt)} started ${rel(root?.startedAt)}; submit ${submit - base}), middle min/p10/p50/p90/max ms: ` +
    `${q("createdAt")}; ${q("queuedAt")}; ${q("startedAt")}; ${q("finishedAt")}; join created ${rel(join?.createdAt)} queued ${rel(join?.queuedAt)} started ${rel(join?.startedAt)}\n`
  );
}

/** "SUCCEEDED 120, RUNNING 64, …": the DAG run's tasks by state. */
async function taskCounts(url: string, dagRunId: string, token: string): Promise<string> {
  const tasks = await taskRows<{ status: string }>(url, dagRunId, token, "status");
  const counts = new Map<string, number>();
  for (const t of tasks) counts.set(t.status, (counts.get(t.status) ?? 0) + 1);
  return [...counts].map(([s, n]) => `${s} ${n}`).join(", ");
}

/** A middle task's row: `c<i>` (static) or an instance of `c` (mapped; the row without mapIndex is the task itself). */
function isMiddle(t: { key: string; mapIndex: number | null }): boolean {
  return /^c\d+$/.test(t.key) || (t.key === "c" && t.mapIndex !== null);
}

function kairosRound(tasks: RunTask[], submit: number, children: number): DagRound {
  const at = (s: string | null | undefined, what: string) => {
    if (!s) throw new Error(`Kairos DAG run: a task has no ${what}`);
    return Date.parse(s);
  };
  const byKey = new Map(tasks.filter((t) => t.mapIndex === null).map((t) => [t.key, t]));
  const root = byKey.get("root");
  const join = byKey.get("join");
  const middle = tasks.filter(isMiddle);
  if (!root?.run || !join?.run || middle.length !== children) throw new Error(`Kairos DAG run: ${middle.length} middle tasks, root ${root ? "present" : "missing"}, join ${join ? "present" : "missing"}`);
  const lastStart = Math.max(...middle.map((t) => at(t.run?.startedAt, "startedAt")));
  const lastEnd = Math.max(...middle.map((t) => at(t.run?.finishedAt, "finishedAt")));
  return {
    toLastChildStartMs: lastStart - submit,
    joinDelayMs: at(join.run.startedAt, "startedAt") - lastEnd,
    fanOutMs: lastStart - at(root.run.finishedAt, "finishedAt"),
    totalMs: at(join.run.finishedAt, "finishedAt") - submit,
  };
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

const name = (r: DagBenchResult) => (r.variant ? `${r.system} (${r.variant})` : r.system);

/** The table, every round, and the ratios of each Kairos variant to BullMQ (BullMQ ÷ Kairos: > 1 = Kairos faster). */
export function formatDag(results: DagBenchResult[]): string {
  const n = results[0]?.children ?? DAG_BENCH_MAPPED;
  const shape = results.find((r) => r.shape)?.shape ?? "mapped";
  const kairosDag = shape === "mapped" ? `Kairos DAG root → c mapped over root's list of ${n.toLocaleString("en-US")} → join` : `Kairos DAG of ${n + 2} tasks`;
  const rows = results.map((r) => [
    name(r),
    r.rounds.length,
    fmtMs(r.toLastChildStart.p50),
    fmtMs(r.toLastChildStart.p99),
    fmtMs(r.joinDelay.p50),
    fmtMs(r.joinDelay.p99),
    r.fanOut ? fmtMs(r.fanOut.p50) : "—",
    fmtMs(r.total.p50),
  ]);
  const lines = [
    table(
      ["system", "rounds", "→ last child start p50", "p99", "last child end → join start p50", "p99", "root end → last child start p50", "total p50"],
      rows,
      { title: `(4) DAG fan-out / fan-in: 1 → ${n.toLocaleString("en-US")} → 1 no-op tasks (${kairosDag}) vs a flow of ${n.toLocaleString("en-US")} children → 1 parent (BullMQ FlowProducer)` },
    ),
    "  rounds (→ last child start / last child end → join start):",
    ...results.map((r) => `    ${name(r)}: ${r.rounds.map((x) => `${fmtMs(x.toLastChildStartMs)} / ${fmtMs(x.joinDelayMs)}`).join(", ")}`),
  ];
  const bull = results.find((r) => r.system === "bullmq");
  for (const k of results.filter((r) => r.system === "kairos")) {
    if (!bull) break;
    lines.push(
      `  BullMQ ÷ ${name(k)} (> 1: Kairos faster): → last child start p50 ${ratio(bull.toLastChildStart.p50, k.toLastChildStart.p50)}, p99 ${ratio(bull.toLastChildStart.p99, k.toLastChildStart.p99)}; ` +
        `join delay p50 ${ratio(bull.joinDelay.p50, k.joinDelay.p50)}, p99 ${ratio(bull.joinDelay.p99, k.joinDelay.p99)}`,
    );
  }
  for (const r of results) for (const note of r.notes) lines.push(`  note (${name(r)}): ${note}`);
  return lines.join("\n");
}

// ---------------------------------------------------------------------------------------------
// Direct run
// ---------------------------------------------------------------------------------------------


async function main(): Promise<void> {
  const quick = process.argv.includes("--quick");
  const systems = (argValue("--systems") ?? "kairos,bullmq").split(",");
  const modes = (argValue("--modes") ?? "noop").split(",") as ExecutorMode[];
  const verbose = process.argv.includes("--verbose");
  const rounds = Number(argValue("--rounds") ?? (quick ? 3 : 5));
  const shape = (argValue("--shape") ?? "mapped") as DagShape;
  if (shape !== "mapped" && shape !== "static") throw new Error(`--shape: mapped or static, not ${shape}`);
  const children = Number(argValue("--children") ?? defaultChildren(shape));
  const timeoutMs = Number(argValue("--timeout-s") ?? 300) * 1000;
  const redis = await startRedis();
  const results: DagBenchResult[] = [];
  try {
    console.log(`DAG bench: Kairos ${kairosRevision()}, ${shape} shape, ${children} children, ${rounds} rounds`);
    if (systems.includes("kairos")) for (const mode of modes) results.push(await benchKairosDag(redis.url, { mode, shape, rounds, children, verbose, timeoutMs, cpuProfDir: argValue("--profile"), executors: Number(argValue("--executors") ?? DAG_EXECUTORS), slots: Number(argValue("--slots") ?? DAG_SLOTS) }));
    if (systems.includes("bullmq")) results.push(await benchBullmqDag(redis.url, { rounds, children, timeoutMs }));
  } finally {
    await redis.stop();
  }
  console.log(formatDag(results));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => process.exit(130));
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
