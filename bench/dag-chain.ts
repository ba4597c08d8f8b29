/**
 * (4b) A DAG step's own cost (issue #27): a linear chain of short tasks, one after the other, so
 * every step waits for the one before and nothing else competes with it.
 *
 * - Kairos: two DAGs through the GraphQL API, each triggered `rounds` times: a chain of `steps`
 *   COMMAND tasks `true`, and a chain of `scriptSteps` SCRIPT tasks (`sh`, an inline script of a
 *   few lines). One executor of 4 slots (real sandboxed processes in `process` mode; none in
 *   `noop`), one scheduler, one API, the emulator, as in shape (4).
 * - BullMQ: a flow whose jobs are nested one level each (`FlowProducer`: a parent starts once its
 *   one child completed), `steps` no-op jobs deep, one Worker process (bench/lib/bullmq-flow-worker.ts).
 *
 * Figures:
 * - parent end → child start, per edge of every round, p50 / p99: Kairos from the parent run's
 *   `finishedAt` (its program's end) to the child's `startedAt` (the executor took it to start);
 *   BullMQ from the child job's last processor statement to the parent's first. Split, for Kairos,
 *   at the child run's `createdAt`: parent end → child run made (the result's write and the DAG
 *   run's advance), then child run made → child start (its queue entry, the executor's take).
 * - a SCRIPT task's start → end (`startedAt` → `finishedAt`: the script written out, its sandbox
 *   started, run, its result file read) beside the same script, the same number of times: in a
 *   bare `bwrap` with the executor's bind layout (src/executor/sandbox/bwrap.ts `bwrapArgs`, no
 *   cgroup, no uid switch) and plain (`sh` spawned by Node), each spawn → exit.
 *
 * Run directly: node --import tsx bench/dag-chain.ts [--quick] [--systems kairos,bullmq]
 *               [--modes process,noop] [--steps N] [--script-steps N] [--rounds N]
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FlowJob } from "bullmq";
import { bwrapArgs, GROUP, PASSWD, SANDBOX_GIVEN, SANDBOX_HOME, SANDBOX_PATH } from "../src/executor/sandbox/bwrap.js";
import { gql } from "./dag.js";
import { kairosRevision, type ExecutorMode, type KairosOptions } from "./kairos.js";
import { bullmqFlowSamples } from "./lib/bullmq-flows.js";
import { buildKairos, KairosCluster, startEmulatorProcess, type Runtime } from "./lib/kairos-cluster.js";
import { startRedis } from "./lib/redis.js";
import { fmtMs, ratio, summarize, table, type Summary } from "./lib/stats.js";
import { argValue } from "./lib/args.js";

const ADMIN_PASSWORD = "bench-admin-password";
const RESOURCES = { cpu: 0.1, memoryMb: 64, pids: 16, diskMb: 1 };
const NOOP_SPEC = { kind: "COMMAND", argv: ["true"], resources: RESOURCES };
/** A short script: a few builtins and a result file, what a glue step of a pipeline does. */
export const CHAIN_SCRIPT = 'n=0\nfor i in 1 2 3; do n=$((n + i)); done\nprintf \'{"n":%s}\' "$n" > "${KAIROS_RESULT:-/dev/null}"\n';
const SCRIPT_SPEC = { kind: "SCRIPT", interpreter: "sh", source: CHAIN_SCRIPT, resources: RESOURCES };
const CHAIN_SLOTS = 4;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

export interface ChainResult {
  system: "kairos" | "bullmq";
  variant?: string;
  steps: number;
  rounds: number;
  /** parent end → child start, every edge of every round (COMMAND chain; BullMQ: its flow). */
  step: Summary;
  /** Kairos: parent end → child run made, and child run made → child start. */
  toCreated?: Summary;
  createdToStart?: Summary;
  /** Kairos: the SCRIPT chain's parent end → child start. */
  scriptStep?: Summary;
  /** Kairos: a SCRIPT task's startedAt → finishedAt. */
  scriptRun?: Summary;
  /** The same script in a bare bwrap and plain, spawn → exit (process mode only). */
  bareBwrap?: Summary;
  plain?: Summary;
  notes: string[];
}

interface ChainOptions {
  steps?: number;
  scriptSteps?: number;
  rounds?: number;
  timeoutMs?: number;
}

// ---------------------------------------------------------------------------------------------
// Kairos
// ---------------------------------------------------------------------------------------------

function chainDag(name: string, steps: number, spec: Record<string, unknown>): Record<string, unknown> {
  return { name, tasks: Array.from({ length: steps }, (_, i) => ({ key: `s${i}`, spec, dependsOn: i === 0 ? [] : [`s${i - 1}`] })) };
}

interface ChainRun {
  key: string;
  run: { createdAt: string; startedAt: string | null; finishedAt: string | null } | null;
}

/** Triggers the DAG, waits for its end, answers its tasks in chain order. */
async function runChain(url: string, token: string, dagId: string, steps: number, timeoutMs: number): Promise<ChainRun[]> {
  const { triggerDag } = await gql<{ triggerDag: { id: string } }>(url, `mutation($id: ID!) { triggerDag(id: $id) { id } }`, { id: dagId }, token);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await sleep(50);
    const { dagRun } = await gql<{ dagRun: { status: string } }>(url, `query($id: ID!) { dagRun(id: $id) { status } }`, { id: triggerDag.id }, token);
    if (dagRun.status === "SUCCEEDED") break;
    if (dagRun.status !== "RUNNING") throw new Error(`Kairos chain DAG run ended ${dagRun.status}`);
    if (Date.now() > deadline) throw new Error(`Kairos chain DAG run still RUNNING after ${timeoutMs} ms`);
  }
  const { dagRun } = await gql<{ dagRun: { tasks: { edges: Array<{ node: ChainRun }> } } }>(
    url,
    `query($id: ID!) { dagRun(id: $id) { tasks(first: 1000) { edges { node { key run { createdAt startedAt finishedAt } } } } } }`,
    { id: triggerDag.id },
    token,
  );
  const byKey = new Map(dagRun.tasks.edges.map(({ node: t }) => [t.key, t]));
  return Array.from({ length: steps }, (_, i) => byKey.get(`s${i}`)!);
}

const ms = (s: string | null | undefined) => {
  if (!s) throw new Error("a chain task has no start or end");
  return Date.parse(s);
};

export async function benchKairosChain(redisUrl: string, opts: ChainOptions & KairosOptions = {}): Promise<ChainResult> {
  const { steps = 20, scriptSteps = 10, rounds = 3, timeoutMs = 120_000 } = opts;
  const mode: ExecutorMode = opts.mode ?? "process";
  const runtime: Runtime = opts.runtime ?? "compiled";
  const notes: string[] = [];
  if (runtime === "compiled") {
    const warning = await buildKairos();
    if (warning) notes.push(warning);
  }
  const emu = await startEmulatorProcess({ runtime, cpuProfDir: opts.cpuProfDir });
  const tag = `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const cluster = new KairosCluster({ mongoUrl: emu.uri, redisUrl, mongoDb: `bench_chain_${tag}`, prefix: `bench-chain-${tag}`, shards: 64, stageAheadMs: 10_000, cpuProfDir: opts.cpuProfDir, runtime });
  const edges: number[] = [];
  const toCreated: number[] = [];
  const createdToStart: number[] = [];
  const scriptEdges: number[] = [];
  const scriptRuns: number[] = [];
  try {
    await Promise.all([cluster.startExecutors(1, CHAIN_SLOTS, { noop: mode === "noop" }), cluster.startSchedulers(1)]);
    const url = await cluster.startApi(ADMIN_PASSWORD, { KAIROS_RATE_SUBMISSIONS: "off" });
    const { login } = await gql<{ login: { token: string } }>(url, `mutation($p: String!) { login(username: "admin", password: $p) { token } }`, { p: ADMIN_PASSWORD });
    const create = async (input: Record<string, unknown>) =>
      (await gql<{ createDag: { id: string } }>(url, `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`, { input }, login.token)).createDag.id;
    const commands = await create(chainDag(`chain-${tag}`, steps, NOOP_SPEC));
    const scripts = scriptSteps > 0 ? await create(chainDag(`chain-script-${tag}`, scriptSteps, SCRIPT_SPEC)) : null;
    // One round of each first, not counted: the processes' JIT and caches warm up.
    await runChain(url, login.token, commands, steps, timeoutMs);
    if (scripts) await runChain(url, login.token, scripts, scriptSteps, timeoutMs);
    for (let round = 0; round < rounds; round++) {
      const tasks = await runChain(url, login.token, commands, steps, timeoutMs);
      for (let i = 1; i < tasks.length; i++) {
        const parentEnd = ms(tasks[i - 1]!.run?.finishedAt);
        const child = tasks[i]!.run!;
        edges.push(ms(child.startedAt) - parentEnd);
        toCreated.push(ms(child.createdAt) - parentEnd);
        createdToStart.push(ms(child.startedAt) - ms(child.createdAt));
      }
      if (!scripts) continue;
      const st = await runChain(url, login.token, scripts, scriptSteps, timeoutMs);
      for (let i = 0; i < st.length; i++) {
        const r = st[i]!.run!;
        scriptRuns.push(ms(r.finishedAt) - ms(r.startedAt));
        if (i > 0) scriptEdges.push(ms(r.startedAt) - ms(st[i - 1]!.run?.finishedAt));
      }
    }
    notes.push(...(await cluster.stopRoles()));
  } finally {
    await cluster.stop().catch((e: Error) => notes.push(`cleanup: ${e.message}`));
    await emu.child.stop();
  }
  const out: ChainResult = {
    system: "kairos",
    variant: mode === "noop" ? "no process" : "process",
    steps,
    rounds,
    step: summarize(edges),
    toCreated: summarize(toCreated),
    createdToStart: summarize(createdToStart),
    notes,
  };
  if (scriptRuns.length) {
    out.scriptStep = summarize(scriptEdges);
    out.scriptRun = summarize(scriptRuns);
    if (mode === "process") {
      out.bareBwrap = await bareScriptRuns(scriptRuns.length, true);
      out.plain = await bareScriptRuns(scriptRuns.length, false);
    }
  }
  return out;
}

/**
 * The chain's script `n` times (after 5 unmeasured), spawn → exit: in a bubblewrap with the
 * executor's own bind layout and namespaces (`bwrapArgs`; its work, tmp and given directories
 * fresh), or plain (`sh` spawned by Node, no sandbox).
 */
export async function bareScriptRuns(n: number, sandboxed: boolean): Promise<Summary> {
  const root = mkdtempSync(join(tmpdir(), "kairos-bench-chain-"));
  try {
    const [work, tmp, given] = ["work", "tmp", "given"].map((d) => join(root, d));
    for (const d of [work!, tmp!, given!]) mkdirSync(d, { recursive: true });
    writeFileSync(join(work!, ".kairos-script"), CHAIN_SCRIPT);
    writeFileSync(join(root, "passwd"), PASSWD);
    writeFileSync(join(root, "group"), GROUP);
    const env = { PATH: SANDBOX_PATH, HOME: SANDBOX_HOME, KAIROS_RESULT: `${SANDBOX_HOME}/.kairos-result`, KAIROS_INPUTS: `${SANDBOX_GIVEN}/inputs.json` };
    const argv = sandboxed
      ? ["bwrap", ...bwrapArgs({ workDir: work!, tmpDir: tmp!, givenDir: given!, passwdFile: join(root, "passwd"), groupFile: join(root, "group"), roPaths: [], rwPaths: [], env, argv: ["/bin/sh", "./.kairos-script"], egress: false })]
      : ["/bin/sh", "./.kairos-script"];
    const once = () =>
      new Promise<number>((resolve, reject) => {
        const t0 = performance.now();
        const child = spawn(argv[0]!, argv.slice(1), { cwd: work, env: sandboxed ? { PATH: SANDBOX_PATH } : { ...env, KAIROS_RESULT: join(work!, ".kairos-result") }, stdio: "ignore" });
        child.once("error", reject);
        child.once("exit", (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`the bench's ${sandboxed ? "bwrap" : "plain"} script exited ${code}`))));
      });
    for (let i = 0; i < 5; i++) await once();
    const xs: number[] = [];
    for (let i = 0; i < n; i++) xs.push(await once());
    return summarize(xs);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// BullMQ
// ---------------------------------------------------------------------------------------------

/** A flow `steps` deep: the innermost job runs first, each parent once its one child completed. */
function chainFlow(queueName: string, round: number, steps: number): FlowJob {
  let job: FlowJob | undefined;
  for (let step = 0; step < steps; step++) {
    job = { name: `s${step}`, queueName, data: { round, role: step === steps - 1 ? "join" : "child", step }, ...(job ? { children: [job] } : {}) };
  }
  return job!;
}

export async function benchBullmqChain(redisUrl: string, opts: ChainOptions = {}): Promise<ChainResult> {
  const { steps = 20, rounds = 3, timeoutMs = 120_000 } = opts;
  const samples = await bullmqFlowSamples(redisUrl, "chain", async ({ queueName, run }) => {
    // Round 0 warms up and is not counted, as on the Kairos side.
    for (let round = 0; round <= rounds; round++) await run(round, chainFlow(queueName, round, steps), timeoutMs);
  });
  const edges: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const bySteps = new Map(samples.filter((s) => s.round === round).map((s) => [s.step ?? -1, s]));
    for (let step = 1; step < steps; step++) {
      const [before, after] = [bySteps.get(step - 1), bySteps.get(step)];
      if (!before || !after) throw new Error(`BullMQ chain ${round}: step ${step} missing`);
      edges.push(after.start - before.end);
    }
  }
  return { system: "bullmq", steps, rounds, step: summarize(edges), notes: [] };
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

const nameOf = (r: ChainResult) => (r.variant ? `${r.system} (${r.variant})` : r.system);
const p = (s: Summary | undefined) => (s ? `${fmtMs(s.p50)} / ${fmtMs(s.p99)}` : "—");

export function formatChain(rs: ChainResult[]): string {
  const steps = rs[0]?.steps ?? 0;
  const lines = [
    table(
      ["system", "edges", "parent end → child start p50 / p99", "→ child run made", "made → start", "SCRIPT chain step", "SCRIPT start → end", "bare bwrap", "plain"],
      rs.map((r) => [nameOf(r), r.step.count, p(r.step), p(r.toCreated), p(r.createdToStart), p(r.scriptStep), p(r.scriptRun), p(r.bareBwrap), p(r.plain)]),
      { title: `(4b) DAG chain: ${steps} short tasks one after the other (Kairos: COMMAND \`true\`, and a chain of SCRIPT \`sh\` tasks; BullMQ: a flow ${steps} jobs deep)` },
    ),
  ];
  const bull = rs.find((r) => r.system === "bullmq");
  for (const k of rs.filter((r) => r.system === "kairos")) {
    if (bull) lines.push(`  BullMQ ÷ ${nameOf(k)} (> 1: Kairos faster): parent end → child start p50 ${ratio(bull.step.p50, k.step.p50)}, p99 ${ratio(bull.step.p99, k.step.p99)}`);
    if (k.scriptRun && k.bareBwrap) lines.push(`  ${nameOf(k)}: SCRIPT task start → end over the same script in a bare bwrap: p50 +${fmtMs(k.scriptRun.p50 - k.bareBwrap.p50)}, over plain: +${fmtMs(k.scriptRun.p50 - (k.plain?.p50 ?? 0))}`);
    for (const note of k.notes) lines.push(`  note (${nameOf(k)}): ${note}`);
  }
  return lines.join("\n");
}


async function main(): Promise<void> {
  const quick = process.argv.includes("--quick");
  const systems = (argValue("--systems") ?? "kairos,bullmq").split(",");
  const modes = (argValue("--modes") ?? "process").split(",") as ExecutorMode[];
  const opts = { steps: Number(argValue("--steps") ?? 20), scriptSteps: Number(argValue("--script-steps") ?? 10), rounds: Number(argValue("--rounds") ?? (quick ? 2 : 3)) };
  const redis = await startRedis();
  const rs: ChainResult[] = [];
  try {
    console.log(`DAG chain bench: Kairos ${kairosRevision()}`);
    if (systems.includes("kairos")) for (const mode of modes) rs.push(await benchKairosChain(redis.url, { ...opts, mode, runtime: (argValue("--runtime") ?? "compiled") as Runtime }));
    if (systems.includes("bullmq")) rs.push(await benchBullmqChain(redis.url, opts));
  } finally {
    await redis.stop();
  }
  console.log(formatChain(rs));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => process.exit(130));
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
