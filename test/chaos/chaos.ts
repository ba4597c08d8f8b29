/**
 * `npm run chaos`: INTERVAL and CRON jobs over a fixed window on a multi-process cluster (1 API,
 * 2 schedulers, 3 executors, Redis, the MongoDB emulator) under faults: 12 `kill -9` of random
 * schedulers and executors (each restarted 3 s later), one Redis FLUSHALL and one Redis restart
 * without persistence. Among the jobs, three scheduled DAGs (two diamonds a → b, c → d, every 4 s;
 * one fan-out a → b1..b5 → c, every 5 s) whose task instances are counted like the jobs' slots. Two scenarios, one after the other: the default run lease (PT30S, as an
 * operator runs it) and a short one (PT3S). Prints, per scenario, the chaos line, its detail line
 * and the recovery figures (docs/chaos.md). Exits 1 when a run is lost, committed twice, or two
 * attempts of one slot overlapped in time (a DAG task instance is a slot), a DAG task started before
 * a parent's committed end, or a DAG fire has no single SUCCEEDED DAG run, in either scenario; 2 when a scenario itself failed.
 *
 * Options: `--lease default|short|both` (or CHAOS_LEASE; both by default); `--redis
 * single|cluster|sentinel|all` (or CHAOS_REDIS; single by default): `cluster` runs one scenario on a
 * Redis Cluster (a primary kill -9ed and its replica promoted, a manual CLUSTER FAILOVER, a reshard
 * of 1,000 slots during the window), `sentinel` one behind Sentinel (the primary kill -9ed, the
 * replica promoted), `all` the lease scenarios and both.
 * Knobs (environment): CHAOS_INTERVAL_JOBS / CHAOS_CRON_JOBS (per scenario: 40/20 with the
 * default lease, 60/30 with the short one), CHAOS_EXECUTORS (3), CHAOS_SLOTS (32), CHAOS_SEED
 * (14, the victims' choice), CHAOS_MISFIRE (the default policy, FIRE_ONCE), CHAOS_KEEP=1 keeps
 * the temp dirs (logs, ledger; a failing scenario's are always kept, and their path printed),
 * CHAOS_VERBOSE=1 prints process events.
 */
import { rmSync } from "node:fs";
import { loadavg } from "node:os";
import { chaosLine, dagFigures, dagViolations, detailLine, faultLines, recoveryLines, violations } from "./analyze.js";
import type { RedisMode } from "./redis-topology.js";
import { faultActions, runScenario, type FaultPlan } from "./scenario.js";
import { alertLine, alertViolations } from "./alerts.js";
import { silenceLine, silenceViolations } from "./silences.js";
import { runAlertLine, runAlertViolations } from "./run-alerts.js";

const num = (name: string, dflt: number) => {
  const v = process.env[name];
  return v === undefined || v === "" ? dflt : Number(v);
};

interface Profile {
  name: "default" | "short" | "cluster" | "sentinel";
  /** @default single */
  redis?: RedisMode;
  lease: string;
  windowMs: number;
  intervalJobs: number;
  cronJobs: number;
  plan: FaultPlan;
  drainMaxMs: number;
  drainStallMs: number;
  /** When the watched job of the silence rule fails ([from, to) ms from the window start): silent through the faults. */
  silentStretchesMs?: Array<[number, number]>;
}

const every = (from: number, step: number, n: number) => Array.from({ length: n }, (_, i) => from + i * step);

// A few quiet seconds first (the lateness the load alone gives: the `baseline` figure), then the store
// faults, each in a stretch of the window no kill reaches, so their recovery windows
// ([fault − 2 s, fault + lease]) hold what they did alone; then 12 kills, one every 4 s (3 s with
// the short lease), whose windows overlap each other.
const PROFILES: Profile[] = [
  {
    name: "default",
    lease: "PT30S",
    windowMs: 140_000,
    intervalJobs: num("CHAOS_INTERVAL_JOBS", 40),
    cronJobs: num("CHAOS_CRON_JOBS", 20),
    plan: { flushAtMs: [12_000], redisRestartAtMs: [46_000], killsAtMs: every(80_000, 4_000, 12), seed: num("CHAOS_SEED", 14) },
    // Silent across the flush, and across the first half of the kills.
    silentStretchesMs: [[8_000, 50_000], [78_000, 110_000]],
    // A killed attempt may wait out its 30 s lease, twice when its shard changes owner.
    drainMaxMs: 240_000,
    drainStallMs: 100_000,
  },
  {
    name: "short",
    lease: "PT3S",
    windowMs: 60_000,
    intervalJobs: num("CHAOS_INTERVAL_JOBS", 60),
    cronJobs: num("CHAOS_CRON_JOBS", 30),
    plan: { flushAtMs: [8_000], redisRestartAtMs: [16_000], killsAtMs: every(22_000, 3_000, 12), seed: num("CHAOS_SEED", 14) },
    // Silent across the Redis restart and the kills.
    silentStretchesMs: [[14_000, 52_000]],
    drainMaxMs: 180_000,
    drainStallMs: 30_000,
  },
];

// On a Redis Cluster (3 primaries + 3 replicas, node timeout 1 s) and behind Sentinel (1 primary,
// 1 replica, 3 sentinels, down after 1 s), short lease: the Redis faults alone, each in its own
// stretch of the window (a reshard of 1,000 slots takes a few seconds).
const REDIS_PROFILES: Profile[] = [
  {
    name: "cluster",
    redis: "cluster",
    lease: "PT3S",
    windowMs: 60_000,
    intervalJobs: num("CHAOS_INTERVAL_JOBS", 40),
    cronJobs: num("CHAOS_CRON_JOBS", 20),
    plan: {
      killsAtMs: [],
      redisFaults: [
        { atMs: 10_000, fault: "primary_kill" },
        { atMs: 25_000, fault: "cluster_failover" },
        { atMs: 40_000, fault: "reshard" },
      ],
      seed: num("CHAOS_SEED", 14),
    },
    drainMaxMs: 180_000,
    drainStallMs: 30_000,
  },
  {
    name: "sentinel",
    redis: "sentinel",
    lease: "PT3S",
    windowMs: 35_000,
    intervalJobs: num("CHAOS_INTERVAL_JOBS", 40),
    cronJobs: num("CHAOS_CRON_JOBS", 20),
    plan: { killsAtMs: [], redisFaults: [{ atMs: 12_000, fault: "primary_kill" }], seed: num("CHAOS_SEED", 14) },
    drainMaxMs: 180_000,
    drainStallMs: 30_000,
  },
];

/** `--redis single|cluster|sentinel|all` (or CHAOS_REDIS; single by default): which Redis the scenarios run on. */
function redisChoice(): Array<Profile["name"]> {
  const i = process.argv.indexOf("--redis");
  const v = (i >= 0 ? process.argv[i + 1] : process.argv.find((a) => a.startsWith("--redis="))?.slice(8)) ?? process.env.CHAOS_REDIS ?? "single";
  if (v === "single") return leaseChoice();
  if (v === "cluster" || v === "sentinel") return [v];
  if (v === "all") return [...leaseChoice(), "cluster", "sentinel"];
  throw new Error(`--redis must be single, cluster, sentinel or all, got ${v}`);
}

function leaseChoice(): Array<Profile["name"]> {
  const i = process.argv.indexOf("--lease");
  const v = (i >= 0 ? process.argv[i + 1] : process.argv.find((a) => a.startsWith("--lease="))?.slice(8)) ?? process.env.CHAOS_LEASE ?? "both";
  if (v === "both") return ["default", "short"];
  if (v === "default" || v === "short") return [v];
  throw new Error(`--lease must be default, short or both, got ${v}`);
}

const DAGS: Array<{ shape: "diamond" | "fanout"; everySeconds: number }> = [
  { shape: "diamond", everySeconds: 4 },
  { shape: "diamond", everySeconds: 4 },
  { shape: "fanout", everySeconds: 5 },
];

async function runProfile(p: Profile, executors: number): Promise<string[]> {
  const started = Date.now();
  const loadBefore = loadavg()[0]!.toFixed(1);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  process.stderr.write(`[chaos] scenario ${p.name}: lease ${p.lease}, ${p.intervalJobs + p.cronJobs} jobs, ${p.windowMs / 1000} s window\n`);
  const result = await runScenario({
    intervalJobs: p.intervalJobs,
    cronJobs: p.cronJobs,
    windowMs: p.windowMs,
    intervalSeconds: [2, 3, 4, 5],
    crons: ["*/3 * * * * *", "*/4 * * * * *", "*/5 * * * * *", "1-59/3 * * * * *", "*/2 * * * * *"],
    timezones: ["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe"],
    sleepSeconds: [0.2, 1],
    dags: DAGS,
    misfire: (process.env.CHAOS_MISFIRE || undefined) as "FIRE_ONCE" | "FIRE_ALL" | "SKIP" | undefined,
    cluster: {
      schedulers: 2,
      executors,
      slots: num("CHAOS_SLOTS", 32),
      lease: p.lease,
      shards: 64,
      // Kept until the verdict: a failing scenario's logs are what explain it (removed below when clean).
      keepDir: true,
      verbose: process.env.CHAOS_VERBOSE === "1",
      redis: p.redis ?? "single",
    },
    silentStretchesMs: p.silentStretchesMs,
    actions: faultActions(p.plan),
    drainMaxMs: p.drainMaxMs,
    drainStallMs: p.drainStallMs,
    log: (m) => process.stderr.write(`[chaos] ${m}\n`),
  });
  const r = result.report;
  out(`== scenario ${p.name} (${p.redis && p.redis !== "single" ? `redis ${p.redis}, ` : ""}lease ${p.lease}, ${p.intervalJobs + p.cronJobs} jobs + ${DAGS.length} DAGs, ${p.windowMs / 1000} s window, ${result.faults.length} faults)`);
  out(`${chaosLine(r)} ${dagFigures(result.dags)}`);
  out(
    `${detailLine(r)} killed_mid_run=${result.killedMidRun} duration=${Math.round((Date.now() - started) / 1000)}s ` +
      `load1 before/after=${loadBefore}/${loadavg()[0]!.toFixed(1)}`,
  );
  out(`overload renewal_kills=${result.overload.renewalKills} deadline_kills=${result.overload.deadlineKills} handed_back_late=${result.overload.handedBackLate}`);
  out(alertLine(result.alerts));
  if (result.silences) out(silenceLine(result.silences));
  if (result.runAlerts) out(runAlertLine(result.runAlerts));
  for (const l of recoveryLines(result.recovery, result.windowStart)) out(l);
  for (const l of faultLines(result.recovery, result.windowStart)) out(`  ${l}`);
  for (const [name, lines] of Object.entries(result.notableLogs)) {
    process.stderr.write(`[chaos] ${name}: ${lines.join("\n    ")}\n`);
  }
  const found = [...violations(r), ...dagViolations(result.dags), ...alertViolations(result.alerts), ...(result.silences ? silenceViolations(result.silences) : []), ...(result.runAlerts ? runAlertViolations(result.runAlerts) : [])].map((v) => `${p.name}: ${v}`);
  if (found.length > 0 || process.env.CHAOS_KEEP === "1") process.stderr.write(`[chaos] logs and ledger kept in ${result.dir}\n`);
  else rmSync(result.dir, { recursive: true, force: true });
  const kills = result.faults.filter((f) => f.kind === "executor_lost" || f.kind === "scheduler_lost").length;
  if (kills < p.plan.killsAtMs.length) process.stderr.write(`chaos: note: ${kills} of ${p.plan.killsAtMs.length} kills happened\n`);
  if (result.killedMidRun === 0) process.stderr.write(`chaos: note: scenario ${p.name}: no attempt was running on a killed executor\n`);
  return found;
}

async function main(): Promise<number> {
  const started = Date.now();
  // A hard bound on the whole run: the harness's exit hook kills every process it started.
  const guard = setTimeout(() => {
    process.stderr.write("chaos: exceeded 14 minutes; aborting\n");
    process.exit(2);
  }, 14 * 60_000);
  guard.unref();
  const executors = num("CHAOS_EXECUTORS", 3);
  const bad: string[] = [];
  for (const name of redisChoice()) bad.push(...(await runProfile([...PROFILES, ...REDIS_PROFILES].find((p) => p.name === name)!, executors)));
  process.stdout.write(`total duration=${Math.round((Date.now() - started) / 1000)}s\n`);
  if (bad.length) {
    process.stderr.write(`chaos: FAILED: ${bad.join("; ")}\n`);
    return 1;
  }
  process.stderr.write("chaos: OK (lost=0, dup_committed=0, lease_overlaps=0, deadline alerts lost=0 doubled=0 unexpected=0, silence alerts lost=0 doubled=0 unexpected=0 with their resolutions, run alerts and recoveries lost=0 doubled=0 unexpected=0, in every scenario)\n");
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`chaos: scenario failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(2);
  },
);
