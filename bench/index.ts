/**
 * `npm run bench`: issue #5's benchmarks, Kairos and BullMQ on the same machine, the same private
 * Redis, in the same run. For each shape Kairos runs first, then BullMQ; every figure is printed,
 * with the ratios (bench/lib/report.ts).
 *
 *   npm run bench                      # full: about 10 minutes on 2 cores
 *   npm run bench -- --quick           # smaller and shorter: about 3 minutes
 *
 * Options: --shapes burst,schedules,throughput,cluster,sandbox,dag,chain,logs,leases,overload,console   --systems kairos,bullmq
 *          (cluster: Kairos's sustained throughput and lateness on one Redis and on a Redis Cluster
 *          of 3 primaries + 3 replicas, test/helpers/redis-cluster.ts, one after the other)
 *          --burst-jobs N  --schedule-seconds N  --cron-seconds N  --throughput-seconds N
 *          --dag-rounds N (DAG runs / flows of the 1 → 1,000 → 1 shape; default 5, 3 with --quick)
 *          --chain-rounds N (DAG runs / flows of the chain shape, each 20 tasks; default 3, 2 with --quick)
 *          --dag-shape mapped|static (Kairos's DAG: root → c mapped over 1,000 → join, the default,
 *            or root → 998 tasks → join)
 *          --burst-rounds N (no-process Kairos and BullMQ take turns N times on the burst; the
 *            median round of each is tabled, every round listed; default 3, 1 with --quick)
 *          --modes process,noop,http (Kairos executor: real process per run / no process / HTTP
 *            jobs to a loopback receiver, throughput shape only)
 *          --runtime compiled|tsx (Kairos processes from a tsc build, the default, or from src/ under tsx)
 *          --console-runs N (runs in the store for the console's runs view; default 100,000, 20,000 with --quick)
 *          --profile DIR (V8 CPU profiles of every Kairos process)   --json FILE   --verbose
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import type { Redis } from "ioredis";
import { createRedisClient } from "../src/shared-state/index.js";
import { startRedisCluster } from "../test/helpers/redis-cluster.js";
import { benchBullmqBurst, benchBullmqSchedulers, benchBullmqThroughput, machineLine } from "./bullmq.js";
import { benchBullmqDag, benchKairosDag, formatDag, type DagBenchResult, type DagShape } from "./dag.js";
import { benchBullmqChain, benchKairosChain, formatChain, type ChainResult } from "./dag-chain.js";
import {
  benchKairosBurst,
  benchKairosSchedules,
  benchKairosThroughput,
  kairosRevision,
  type ExecutorMode,
  type KairosOptions,
} from "./kairos.js";
import { buildKairos, type Runtime } from "./lib/kairos-cluster.js";
import { extraRatioLines, formatStages, isKairos, type KairosResult } from "./lib/kairos-report.js";
import { startRedis } from "./lib/redis.js";
import { benchLeaseWrites, benchOverload, formatLeaseWrites, formatOverload } from "./executor-load.js";
import { benchLogs, formatLogs } from "./logs.js";
import { benchSandbox, formatSandbox } from "./sandbox.js";
import { burstRatios, formatBurst, formatSchedules, formatThroughput, label, scheduleRatios } from "./lib/report.js";
import type { BurstResult, ScheduleResult, ThroughputResult } from "./lib/shapes.js";
import { diffCounts, perRun, redisCommandCounts, REDIS_HOUSEKEEPING } from "./lib/opcounts.js";
import { fmtMs, ratio } from "./lib/stats.js";
import { argValue } from "./lib/args.js";

const BULLMQ_VERSION = "5.47.3";


const quick = process.argv.includes("--quick");
const shapes = (argValue("--shapes") ?? "burst,schedules,throughput,cluster,sandbox,dag,chain,logs,leases,overload,console").split(",");
const systems = (argValue("--systems") ?? "kairos,bullmq").split(",");
const modes = (argValue("--modes") ?? "process,noop,http").split(",") as ExecutorMode[];
const kairosBase: KairosOptions = {
  cpuProfDir: argValue("--profile"),
  verbose: process.argv.includes("--verbose"),
  runtime: (argValue("--runtime") ?? "compiled") as Runtime,
};
const jsonOut = argValue("--json");

const num = (name: string, dflt: number) => (argValue(name) !== undefined ? Number(argValue(name)) : dflt);
const plan = {
  burstJobs: num("--burst-jobs", quick ? 5_000 : 20_000),
  burstRounds: Math.max(1, num("--burst-rounds", quick ? 1 : 3)),
  scheduleSeconds: num("--schedule-seconds", quick ? 10 : 60),
  cronSeconds: num("--cron-seconds", quick ? 10 : 30),
  throughputSeconds: num("--throughput-seconds", quick ? 5 : 15),
  dagRounds: Math.max(1, num("--dag-rounds", quick ? 3 : 5)),
  dagShape: (argValue("--dag-shape") ?? "mapped") as DagShape,
  chainRounds: Math.max(1, num("--chain-rounds", quick ? 2 : 3)),
  consoleRuns: num("--console-runs", quick ? 20_000 : 100_000),
};
if (plan.dagShape !== "mapped" && plan.dagShape !== "static") throw new Error(`--dag-shape: mapped or static, not ${String(plan.dagShape)}`);

const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");

function stageBlock(results: Array<{ system: string }>): string {
  const ks = results.filter(isKairos) as KairosResult[];
  return ks.length ? formatStages(ks) : "";
}

/** Runs a BullMQ bench and adds a note with the Redis commands executed per job (Lua-internal calls included). */
async function countingRedis<T extends { notes?: string[] }>(redisUrl: string, perJob: (r: T) => number, run: () => Promise<T>): Promise<T> {
  const redis = createRedisClient(redisUrl) as Redis;
  try {
    const a = await redisCommandCounts(redis);
    const r = await run();
    const b = await redisCommandCounts(redis);
    (r.notes ??= []).push(`work per job: ${perRun("Redis commands", diffCounts(a, b), perJob(r), REDIS_HOUSEKEEPING)} — whole run incl. adds, the producer's checks and the final obliterate`);
    return r;
  } finally {
    redis.disconnect();
  }
}

/** bench/console.ts in a child process (it prints its table); answers its figures. */
function benchConsoleChild(opts: { runs: number; loads: number }): Promise<unknown> {
  const out = join(tmpdir(), `kairos-bench-console-${process.pid}.json`);
  const args = ["--import", "tsx", fileURLToPath(new URL("./console.ts", import.meta.url)), "--runs", String(opts.runs), "--changes", "200", "--loads", String(opts.loads), "--scroll-seconds", "3", "--json-out", out];
  return new Promise((resolve, reject) => {
    spawn(process.execPath, args, { stdio: "inherit" }).once("exit", (code) => {
      if (code !== 0) return reject(new Error(`bench/console.ts exited with ${code}`));
      resolve(JSON.parse(readFileSync(out, "utf8")));
    });
  });
}

async function section<T>(title: string, run: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  process.stderr.write(`… ${title} (load ${load()})\n`);
  const r = await run();
  process.stderr.write(`  ${title}: ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
  return r;
}

/** The round whose "time until all started" is the median (the lower middle one of an even count). */
function medianRound(list: BurstResult[]): BurstResult {
  return [...list].sort((a, b) => a.allStartedMs - b.allStartedMs)[Math.floor((list.length - 1) / 2)]!;
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const redis = await startRedis();
  const probe = createRedisClient(redis.url) as Redis;
  const redisVersion = /redis_version:(\S+)/.exec(await probe.info("server"))?.[1] ?? "?";
  probe.disconnect();
  const all: Record<string, unknown[]> = {};
  console.log(`Kairos vs BullMQ benchmarks (issue #5)${quick ? " --quick" : ""}`);
  console.log(`machine: ${machineLine()}`);
  console.log(`redis-server ${redisVersion} (private, loopback, no persistence) ${redis.url}; Kairos ${kairosRevision()}; BullMQ ${BULLMQ_VERSION}`);
  // The console shape runs the product in this process from src/: only the other shapes need the build.
  if (systems.includes("kairos") && kairosBase.runtime === "compiled" && shapes.some((s) => s !== "console")) {
    const b0 = Date.now();
    const warning = await buildKairos();
    console.log(`Kairos processes run compiled: tsc src/ → .kairos/bench-dist in ${((Date.now() - b0) / 1000).toFixed(0)} s${warning ? ` (${warning})` : ""}`);
  }
  if (loadavg()[0]! > availableParallelism() / 2) {
    console.log(`warning: the machine is busy before the start (load ${load()} on ${availableParallelism()} cores); figures will be noisy`);
  }
  console.log();
  try {
    if (shapes.includes("burst")) {
      // A burst lasts seconds, so one round is at the mercy of whatever else the machine does at
      // that moment: the no-process Kairos and BullMQ take turns, round after round, and each is
      // tabled by its median round (process mode, a minute a round, runs once).
      const rounds = new Map<string, BurstResult[]>();
      const add = (r: BurstResult) => (rounds.get(label(r)) ?? rounds.set(label(r), []).get(label(r))!).push(r);
      if (systems.includes("kairos") && modes.includes("process")) {
        add(await section("burst kairos (process)", () => benchKairosBurst(redis.url, { ...kairosBase, mode: "process", jobs: plan.burstJobs })));
      }
      for (let round = 1; round <= plan.burstRounds; round++) {
        const of = plan.burstRounds > 1 ? `, round ${round}/${plan.burstRounds}` : "";
        if (systems.includes("kairos") && modes.includes("noop")) {
          add(await section(`burst kairos (noop${of})`, () => benchKairosBurst(redis.url, { ...kairosBase, mode: "noop", jobs: plan.burstJobs })));
        }
        if (systems.includes("bullmq")) add(await section(`burst bullmq${of}`, () => countingRedis(redis.url, (r) => r.jobs, () => benchBullmqBurst(redis.url, { jobs: plan.burstJobs }))));
      }
      const rs = [...rounds.values()].map(medianRound);
      all.burst = [...rounds.values()].flat();
      const roundLines =
        plan.burstRounds > 1
          ? [`  rounds, all started / p99 (the table shows each system's median round by "all started"):`, ...[...rounds].map(([name, list]) => `    ${name}: ${list.map((r) => `${fmtMs(r.allStartedMs)} / ${fmtMs(r.lateness.p99)}`).join(", ")}`)]
          : [];
      console.log(
        [
          formatBurst(rs, `(1) burst: ${plan.burstJobs.toLocaleString("en-US")} one-off no-op jobs due at the same instant`),
          ...roundLines,
          stageBlock(rs),
          extraRatioLines(rs, burstRatios),
        ]
          .filter(Boolean)
          .join("\n") + "\n",
      );
    }

    if (shapes.includes("schedules")) {
      const every: ScheduleResult[] = [];
      if (systems.includes("kairos")) {
        // HTTP jobs are measured by the throughput shape (and its fire → request latency).
        for (const mode of modes.filter((m) => m !== "http")) {
          every.push(await section(`schedules kairos (${mode}, interval)`, () => benchKairosSchedules(redis.url, { ...kairosBase, mode, seconds: plan.scheduleSeconds, form: "interval" })));
        }
      }
      if (systems.includes("bullmq")) every.push(await section("schedules bullmq (every)", () => countingRedis(redis.url, (r) => r.fires, () => benchBullmqSchedulers(redis.url, { seconds: plan.scheduleSeconds, form: "every" }))));
      console.log(
        [formatSchedules(every, "(2) recurring: 1,000 every-second schedules — INTERVAL PT1S vs {every: 1000}"), stageBlock(every), extraRatioLines(every, scheduleRatios)]
          .filter(Boolean)
          .join("\n") + "\n",
      );
      // The cron form (all schedules on the same second boundary): Kairos without processes only,
      // since a process per run cannot keep up with 1,000 runs/s here (see the line above).
      const cron: ScheduleResult[] = [];
      if (systems.includes("kairos") && modes.includes("noop")) {
        cron.push(await section("schedules kairos (noop, cron)", () => benchKairosSchedules(redis.url, { ...kairosBase, mode: "noop", seconds: plan.cronSeconds, form: "cron" })));
      }
      if (systems.includes("bullmq")) cron.push(await section("schedules bullmq (pattern)", () => countingRedis(redis.url, (r) => r.fires, () => benchBullmqSchedulers(redis.url, { seconds: plan.cronSeconds, form: "pattern" }))));
      if (cron.length) {
        console.log(
          [formatSchedules(cron, "(2b) recurring, all on the second: CRON '* * * * * *' vs {pattern: '* * * * * *'}"), stageBlock(cron), extraRatioLines(cron, scheduleRatios)]
            .filter(Boolean)
            .join("\n") + "\n",
        );
      }
      all.schedules = [...every, ...cron];
    }

    if (shapes.includes("throughput")) {
      const rs: ThroughputResult[] = [];
      for (const workers of [1, 2] as const) {
        if (systems.includes("kairos")) {
          for (const mode of modes) {
            rs.push(await section(`throughput kairos (${mode}, ${workers} scheduler(s))`, () => benchKairosThroughput(redis.url, { ...kairosBase, mode, schedulers: workers, seconds: plan.throughputSeconds })));
          }
        }
        if (systems.includes("bullmq")) rs.push(await section(`throughput bullmq (${workers} worker(s))`, () => countingRedis(redis.url, (r) => r.runs, () => benchBullmqThroughput(redis.url, { workers, seconds: plan.throughputSeconds }))));
      }
      all.throughput = rs;
      console.log(
        [formatThroughput(rs, "(3) sustained throughput, fire → start (Kairos: 1 / 2 scheduler processes; BullMQ: 1 / 2 Worker processes)"), stageBlock(rs)]
          .filter(Boolean)
          .join("\n") + "\n",
      );
      const k1 = rs.find((r) => r.system === "kairos" && r.workers === 1 && r.variant === "no process");
      const k2 = rs.find((r) => r.system === "kairos" && r.workers === 2 && r.variant === "no process");
      if (k1 && k2) console.log(`  Kairos (no process) 2 schedulers ÷ 1 scheduler: runs/s ${ratio(k2.perSecond, k1.perSecond, 0)}\n`);
    }

    if (shapes.includes("cluster") && systems.includes("kairos")) {
      // The same throughput shape (no process per run, 2 schedulers) on this run's single Redis and
      // on a Redis Cluster: what sharding the store costs or gains on one machine. (BullMQ has no
      // peer here: a queue lives in one hash slot, so a Cluster does not spread it.)
      const rs: ThroughputResult[] = [];
      const opts = { ...kairosBase, mode: "noop" as const, schedulers: 2 as const, seconds: plan.throughputSeconds };
      rs.push({ ...(await section("cluster shape: kairos on one redis", () => benchKairosThroughput(redis.url, opts))), variant: "no process, one Redis" });
      const cluster = await startRedisCluster();
      try {
        rs.push({ ...(await section("cluster shape: kairos on a redis cluster", () => benchKairosThroughput(cluster.target, opts))), variant: "no process, Redis Cluster 3+3" });
      } finally {
        await cluster.stop();
      }
      all.cluster = rs;
      console.log([formatThroughput(rs, "(3c) sustained throughput, fire → start, 2 schedulers: one Redis vs a Redis Cluster (3 primaries + 3 replicas, same machine)"), stageBlock(rs)].filter(Boolean).join("\n") + "\n");
    }
    if (shapes.includes("dag")) {
      const rs: DagBenchResult[] = [];
      // A side that does not finish (a round past its time limit) is reported, and the others still run.
      const failures: string[] = [];
      const attempt = async (title: string, run: () => Promise<DagBenchResult>) => {
        try {
          rs.push(await section(title, run));
        } catch (e) {
          failures.push(`  ${title}: did not finish: ${(e as Error).message}`);
        }
      };
      if (systems.includes("kairos")) {
        for (const mode of modes) await attempt(`dag kairos (${mode})`, () => benchKairosDag(redis.url, { ...kairosBase, mode, shape: plan.dagShape, rounds: plan.dagRounds }));
      }
      if (systems.includes("bullmq")) await attempt("dag bullmq (flow)", () => benchBullmqDag(redis.url, { rounds: plan.dagRounds, shape: plan.dagShape }));
      all.dag = rs;
      console.log([rs.length ? formatDag(rs) : "(4) DAG fan-out / fan-in: no result", ...failures].join("\n") + "\n");
    }
    if (shapes.includes("chain")) {
      // A DAG step's own cost (issue #27): a chain of short tasks, each waiting for the one before.
      // Kairos with real sandboxed processes (what a step costs a user); BullMQ's flow nested as deep.
      const rs: ChainResult[] = [];
      const failures: string[] = [];
      const attempt = async (title: string, run: () => Promise<ChainResult>) => {
        try {
          rs.push(await section(title, run));
        } catch (e) {
          failures.push(`  ${title}: did not finish: ${(e as Error).message}`);
        }
      };
      if (systems.includes("kairos") && modes.includes("process")) await attempt("chain kairos (process)", () => benchKairosChain(redis.url, { ...kairosBase, mode: "process", rounds: plan.chainRounds }));
      if (systems.includes("bullmq")) await attempt("chain bullmq (flow)", () => benchBullmqChain(redis.url, { rounds: plan.chainRounds }));
      all.chain = rs;
      console.log([rs.length ? formatChain(rs) : "(4b) DAG chain: no result", ...failures].join("\n") + "\n");
    }
    if (shapes.includes("sandbox") && systems.includes("kairos")) {
      // Not a BullMQ shape: BullMQ runs no user program, so there is nothing of its to set beside these.
      const runs = quick ? 100 : 300;
      const rs = [await benchSandbox("none", { runs, slots: 4 }), await benchSandbox("bubblewrap", { runs, slots: 4, launcher: false }), await benchSandbox("bubblewrap", { runs, slots: 4 })];
      all.sandbox = rs;
      console.log(formatSandbox(rs, runs, 4) + "\n");
    }
    if (shapes.includes("logs") && systems.includes("kairos")) {
      // Not a BullMQ shape either: BullMQ keeps no program output.
      const mb = quick ? 8 : 32;
      const rs = await section("log throughput", () => benchLogs({ scenarios: [{ runs: 1, mb }, { runs: 10, mb: mb / 4 }], runtime: kairosBase.runtime }));
      all.logs = rs;
      console.log(formatLogs(rs) + "\n");
    }
    if (shapes.includes("leases") && systems.includes("kairos")) {
      // Not BullMQ shapes: BullMQ runs no program and keeps no lease in a document store.
      const r = await section("lease writes", () => benchLeaseWrites(redis.url, { seconds: quick ? 10 : 20 }));
      all.leases = [r];
      console.log(formatLeaseWrites(r) + "\n");
    }
    if (shapes.includes("overload") && systems.includes("kairos")) {
      const r = await section("overload", () => benchOverload(redis.url, { windowSeconds: quick ? 20 : 60 }));
      all.overload = [r];
      console.log(formatOverload(r) + "\n");
    }
    if (shapes.includes("console") && systems.includes("kairos")) {
      // Not a BullMQ shape: BullMQ ships no console (bull-board, its UI, is not installed here), so
      // no BullMQ equivalent is measured. Chromium drives the built console (bench/console.ts).
      // A child process: bench/console.ts is typed with the DOM's lib (its page-side code), this file is not.
      all.console = [await section("console", () => benchConsoleChild({ runs: plan.consoleRuns, loads: quick ? 3 : 5 }))];
      console.log("");
    }
  } finally {
    await redis.stop();
  }
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ machine: machineLine(), redisVersion, kairos: kairosRevision(), bullmq: BULLMQ_VERSION, quick, results: all }, null, 2));
  console.log(`total ${((Date.now() - t0) / 1000).toFixed(0)} s; load at the end ${load()}`);
}

for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => process.exit(130)); // 'exit' hooks kill every child
main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
