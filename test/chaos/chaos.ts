/**
 * `npm run chaos`: a few hundred INTERVAL and CRON jobs over a fixed window on a multi-process
 * cluster (2 schedulers, 3 executors), with executors and schedulers SIGKILLed mid-run and
 * restarted, then the chaos line (docs/chaos.md). Exits 1 when a run is lost, committed twice, or
 * two attempts of one slot overlapped in time; exits 2 when the scenario itself failed.
 *
 * Knobs (environment): CHAOS_INTERVAL_JOBS (200), CHAOS_CRON_JOBS (100), CHAOS_WINDOW_S (60),
 * CHAOS_EXECUTORS (3), CHAOS_SLOTS (32), CHAOS_MISFIRE (the default policy, FIRE_ONCE),
 * CHAOS_KEEP=1 keeps the temp dir (logs, ledger),
 * CHAOS_VERBOSE=1 prints process events.
 */
import { loadavg } from "node:os";
import { chaosLine, detailLine, violations } from "./analyze.js";
import type { Cluster } from "./harness.js";
import { killExecutorMidRun, runScenario, type ChaosAction } from "./scenario.js";

const num = (name: string, dflt: number) => {
  const v = process.env[name];
  return v === undefined || v === "" ? dflt : Number(v);
};

const windowMs = num("CHAOS_WINDOW_S", 60) * 1000;
const executors = num("CHAOS_EXECUTORS", 3);
const at = (fraction: number) => Math.round(windowMs * fraction);
const kill = (name: string) => (c: Cluster) => (name.startsWith("executor") ? killExecutorMidRun(c, name) : c.kill9(name));
const start = (name: string) => (c: Cluster) => c.get(name).start();

// Each victim is down for 3 s. A scheduler's shards wait for its shard lease (15 s) to lapse.
const actions: ChaosAction[] = [
  { atMs: at(0.2), label: "kill -9 executor-1", run: kill("executor-1") },
  { atMs: at(0.2) + 3_000, label: "restart executor-1", run: start("executor-1") },
  { atMs: at(0.35), label: "kill -9 scheduler-1", run: kill("scheduler-1") },
  { atMs: at(0.35) + 3_000, label: "restart scheduler-1", run: start("scheduler-1") },
  { atMs: at(0.55), label: `kill -9 executor-${Math.min(2, executors)}`, run: kill(`executor-${Math.min(2, executors)}`) },
  { atMs: at(0.55) + 3_000, label: `restart executor-${Math.min(2, executors)}`, run: start(`executor-${Math.min(2, executors)}`) },
  { atMs: at(0.7), label: "kill -9 scheduler-2", run: kill("scheduler-2") },
  { atMs: at(0.7) + 3_000, label: "restart scheduler-2", run: start("scheduler-2") },
];

async function main(): Promise<number> {
  const started = Date.now();
  const loadBefore = loadavg()[0]!.toFixed(1);
  // A hard bound on the whole run: the harness's exit hook kills every process it started.
  const guard = setTimeout(() => {
    process.stderr.write("chaos: exceeded 9 minutes; aborting\n");
    process.exit(2);
  }, 9 * 60_000);
  guard.unref();
  const result = await runScenario({
    intervalJobs: num("CHAOS_INTERVAL_JOBS", 200),
    cronJobs: num("CHAOS_CRON_JOBS", 100),
    windowMs,
    intervalSeconds: [2, 3, 4, 5],
    crons: ["*/3 * * * * *", "*/4 * * * * *", "*/5 * * * * *", "1-59/3 * * * * *", "*/2 * * * * *"],
    timezones: ["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe"],
    sleepSeconds: [0.2, 1],
    misfire: (process.env.CHAOS_MISFIRE || undefined) as "FIRE_ONCE" | "FIRE_ALL" | "SKIP" | undefined,
    cluster: {
      schedulers: 2,
      executors,
      slots: num("CHAOS_SLOTS", 32),
      lease: "PT3S",
      shards: 64,
      keepDir: process.env.CHAOS_KEEP === "1",
      verbose: process.env.CHAOS_VERBOSE === "1",
    },
    actions,
    drainMaxMs: 180_000,
    drainStallMs: 30_000,
    log: (m) => process.stderr.write(`[chaos] ${m}\n`),
  });
  const r = result.report;
  process.stdout.write(`${chaosLine(r)}\n`);
  process.stdout.write(
    `${detailLine(r)} killed_mid_run=${result.killedMidRun} duration=${Math.round((Date.now() - started) / 1000)}s ` +
      `load1 before/after=${loadBefore}/${loadavg()[0]!.toFixed(1)}\n`,
  );
  for (const [name, lines] of Object.entries(result.notableLogs)) {
    process.stderr.write(`[chaos] ${name}: ${lines.join("\n    ")}\n`);
  }
  if (process.env.CHAOS_KEEP === "1") process.stderr.write(`[chaos] logs and ledger kept in ${result.dir}\n`);
  const bad = violations(r);
  if (bad.length) {
    process.stderr.write(`chaos: FAILED: ${bad.join("; ")}\n`);
    return 1;
  }
  if (result.killedMidRun === 0) process.stderr.write("chaos: note: no attempt was running on a killed executor\n");
  process.stderr.write("chaos: OK (lost=0, dup_committed=0, lease_overlaps=0)\n");
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`chaos: scenario failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(2);
  },
);
