/**
 * The sandbox's cost (issue #11): what starting a run in bubblewrap (a cgroup per run, rlimits,
 * user/PID/mount/IPC/UTS/net namespaces, the uid switch) adds over a plain process, on one node.
 *
 *   (a) start overhead: `true` run one at a time, N times, through the executor's own code path
 *       (Sandbox.prepare + runProcess), sandboxed and plain; p50/p99 of spawn → exit;
 *   (b) no-op runs per second on one node: `true` through the same path, `slots` at a time, for a
 *       fixed count, sandboxed and plain.
 *
 * Run alone: node --import tsx bench/sandbox.ts [--runs N] [--slots N]; part of `npm run bench`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_RESOURCES } from "../src/core/resources.js";
import { RunAbort } from "../src/executor/abort.js";
import { runProcess } from "../src/executor/process.js";
import { Sandbox, type SandboxMode } from "../src/executor/sandbox/sandbox.js";
import { silentLogger } from "../src/support/log.js";
import type { JobSpec } from "../src/domain/documents.js";
import { fmtMs, ratio, summarize, type Summary } from "./lib/stats.js";

export interface SandboxBenchResult {
  mode: SandboxMode;
  /** Started through the launcher in a sandbox kept per slot (bubblewrap only). */
  launcher: boolean;
  isolation: string;
  start: Summary;
  runsPerSecond: number;
  /** The event loop's delay while the slots start runs at full rate, p50 / p99 (ms). */
  loopDelay: { p50: number; p99: number };
}

const SPEC: JobSpec = { kind: "COMMAND", command: null, argv: ["true"], env: {}, timeoutMs: 60_000, pool: "default", resources: DEFAULT_RESOURCES };

async function one(sandbox: Sandbox, slot: number, name: string): Promise<number> {
  const p = sandbox.prepare(slot, name, SPEC, { KAIROS_RUN_ID: name }, DEFAULT_RESOURCES);
  const t0 = performance.now();
  const r = await runProcess({ ...p.process, timeoutMs: 60_000 }, new RunAbort());
  const ms = performance.now() - t0;
  p.cgroup?.remove();
  await sandbox.releaseSlot(slot);
  if (r.exitCode !== 0) throw new Error(`bench run failed: ${JSON.stringify(r)}`);
  return ms;
}

export async function benchSandbox(mode: SandboxMode, opts: { runs: number; slots: number; launcher?: boolean }): Promise<SandboxBenchResult> {
  const root = await mkdtemp(join(tmpdir(), "kairos-bench-sandbox-"));
  const sandbox = Sandbox.open({ mode, launcher: opts.launcher ?? true, workRoot: join(root, "work"), slots: opts.slots, uidBase: 62_000, roPaths: [], nodeTag: `bench${mode[0]}`, log: silentLogger() });
  try {
    await sandbox.ready();
    for (let i = 0; i < 20; i++) await one(sandbox, 0, `warm-${i}`); // warm caches
    const starts: number[] = [];
    for (let i = 0; i < opts.runs; i++) starts.push(await one(sandbox, 0, `seq-${i}`));
    let next = 0;
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: opts.slots }, async (_, slot) => {
        while (next < opts.runs) await one(sandbox, slot, `par-${next++}`);
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    loop.disable();
    const loopDelay = { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6 };
    const launched = sandbox.isolation.enforced.includes("sandbox-kept-per-slot");
    return { mode, launcher: launched, isolation: `${sandbox.isolation.mode}: ${sandbox.isolation.enforced.join(", ")}`, start: summarize(starts), runsPerSecond: opts.runs / seconds, loopDelay };
  } finally {
    await sandbox.close();
    await rm(root, { recursive: true, force: true });
  }
}

export function formatSandbox(rs: SandboxBenchResult[], runs: number, slots: number): string {
  const [plain, sbx] = [rs.find((r) => r.mode === "none"), rs.find((r) => r.mode === "bubblewrap" && r.launcher) ?? rs.find((r) => r.mode === "bubblewrap")];
  const lines = [`(4) sandbox cost on one node: \`true\` through Sandbox.prepare + runProcess, ${runs} runs one at a time, then ${runs} with ${slots} slots`];
  for (const r of rs) {
    const name = r.mode === "bubblewrap" ? (r.launcher ? "bubblewrap (kept per slot, launcher)" : "bubblewrap (one per run)") : "plain (spawned by Node)";
    lines.push(`  ${name.padEnd(37)} start p50 ${fmtMs(r.start.p50)}  p99 ${fmtMs(r.start.p99)}  max ${fmtMs(r.start.max)}   no-op runs/s ${r.runsPerSecond.toFixed(0)}   event-loop delay p50 ${fmtMs(r.loopDelay.p50)} p99 ${fmtMs(r.loopDelay.p99)}`);
  }
  if (plain && sbx) {
    lines.push(`  sandbox overhead per start: p50 +${fmtMs(sbx.start.p50 - plain.start.p50)}, p99 +${fmtMs(sbx.start.p99 - plain.start.p99)}; runs/s sandboxed ÷ plain ${ratio(sbx.runsPerSecond, plain.runsPerSecond, 0)}`);
    lines.push(`  isolation: ${sbx.isolation}`);
  }
  return lines.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (n: string, d: number) => (process.argv.includes(n) ? Number(process.argv[process.argv.indexOf(n) + 1]) : d);
  const runs = arg("--runs", 300);
  const slots = arg("--slots", 4);
  const rs = [await benchSandbox("none", { runs, slots }), await benchSandbox("bubblewrap", { runs, slots, launcher: false }), await benchSandbox("bubblewrap", { runs, slots })];
  console.log(formatSandbox(rs, runs, slots));
}
