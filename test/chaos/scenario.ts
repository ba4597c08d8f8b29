/**
 * One chaos scenario: start a cluster, submit INTERVAL and CRON jobs whose slots all fall in a
 * fixed window [T0, T0 + window], run timed actions (kill -9, restart, freeze) during the window,
 * wait for the system to drain, then analyse the runs in MongoDB against the external ledger and
 * the independent slot evaluator. Used by `npm run chaos` and by test/chaos/cluster.test.ts.
 */
import {
  analyze,
  analyzeDags,
  dagInstanceInput,
  executorEnds,
  faultsFromEvents,
  supervisorKills,
  recovery,
  type ChaosDag,
  type ChaosReport,
  type DagChaosReport,
  type Fault,
  type RecoveryReport,
} from "./analyze.js";
import { isoSeconds, type ChaosSchedule } from "./expected.js";
import { Cluster, sleep, type ClusterOptions } from "./harness.js";
import { ledgerCommand, readLedger } from "./ledger.js";
import { accountDeadlines, ALERT_ENV, watchDeadlines, type AlertAccount, type AlertWatch } from "./alerts.js";
import { accountSilences, silenceUser, watchSilence, type SilenceAccount, type SilenceWatch } from "./silences.js";
import { accountRunAlerts, watchRunAlerts, type RunAlertAccount, type RunAlertWatch } from "./run-alerts.js";
import type { RedisFault } from "./redis-topology.js";

export interface ChaosAction {
  /** Offset from T0 (the window start), ms. */
  atMs: number;
  label: string;
  run: (c: Cluster) => Promise<unknown>;
  /**
   * Run without waiting for it to finish (a kill whose restart takes a while), so later actions
   * keep their times. Awaited after the window; an error there fails the scenario.
   */
  background?: boolean;
}

export interface ScenarioOptions {
  intervalJobs: number;
  cronJobs: number;
  /** Length of the schedule window. */
  windowMs: number;
  /** INTERVAL periods to draw from (whole seconds). @default [2, 3, 4, 5] */
  intervalSeconds?: number[];
  /** Six-field (seconds first) cron expressions to draw from. */
  crons?: string[];
  /** Time zones the crons are evaluated in. @default ["UTC"] */
  timezones?: string[];
  /** Misfire policy of every job; unset = the product default (FIRE_ONCE). */
  misfire?: "FIRE_ONCE" | "FIRE_ALL" | "SKIP";
  /** Each job sleeps a fixed time in [min, max] seconds between its start and end lines. */
  sleepSeconds?: [number, number];
  /**
   * Scheduled DAGs among the jobs, each an INTERVAL schedule over the window: `diamond` is
   * a → b, c → d; `fanout` is a → b1..b5 → c. Every task runs the jobs' ledger command, so each
   * task instance is counted like a job's slot (see analyzeDags). @default none
   */
  dags?: Array<{ shape: "diamond" | "fanout"; everySeconds: number }>;
  cluster: ClusterOptions;
  /**
   * A SCHEDULE_SILENT rule on a job of its own (every second) that fails during these stretches
   * ([from, to) ms from the window start), so it is silent while the faults hit (./silences.ts).
   * @default none (no silence rule)
   */
  silentStretchesMs?: Array<[number, number]>;
  actions: ChaosAction[];
  /** Longest wait after the window for every run to finish. @default 90 s */
  drainMaxMs?: number;
  /** Give up draining after this long without any run finishing. @default 30 s */
  drainStallMs?: number;
  log?: (msg: string) => void;
}

export interface ScenarioResult {
  /** Jobs' slots and DAG task instances together. */
  report: ChaosReport;
  /** The DAG side: DAG runs per fire, dependency order. */
  dags: DagChaosReport;
  /** The faults (kills, Redis flush and restart) in time order, and what they did to lateness. */
  faults: Fault[];
  recovery: RecoveryReport;
  windowStart: number;
  windowEnd: number;
  /** Attempts that had started and were still running when their executor was SIGKILLed. */
  killedMidRun: number;
  dir: string;
  timeline: string[];
  /** Warn/error lines from the Kairos logs worth reading (first few per process). */
  notableLogs: Record<string, string[]>;
  /**
   * What busy executors did to work they had taken (issue #27), from their logs: attempts killed for
   * lack of renewal (by the executor, and by its supervisor at the lease deadline), and takes handed
   * back because they were started too late.
   */
  overload: { renewalKills: number; deadlineKills: number; handedBackLate: number };
  /** Deadline alerts (issue #31): every slot that missed its deadline received once, none that met it (./alerts.ts). */
  alerts: AlertAccount;
  /** Silence alerts (issue #31), when `silentStretchesMs` was given: each silence received once, and its end (./silences.ts). */
  silences: SilenceAccount | null;
  /** Run-end and RECOVERED alerts on the silence count's job, when there is one (./run-alerts.ts). */
  runAlerts: RunAlertAccount | null;
}

const OPEN = ["PENDING", "QUEUED", "RUNNING", "RETRY_SCHEDULED"];

export async function runScenario(o: ScenarioOptions): Promise<ScenarioResult> {
  const log = o.log ?? (() => undefined);
  const t = Date.now();
  const cluster = await Cluster.start({ ...o.cluster, env: { ...ALERT_ENV, ...o.cluster.env } });
  const timeline: string[] = [];
  const mark = (what: string) => {
    const line = `${new Date().toISOString()} ${what}`;
    timeline.push(line);
    log(line);
  };
  mark(`cluster up in ${Date.now() - t} ms (${cluster.dir})`);
  let alertWatch: AlertWatch | null = null;
  try {
    const ledgerPath = cluster.ledgerPath;
    alertWatch = await watchDeadlines(cluster);
    const intervals = o.intervalSeconds ?? [2, 3, 4, 5];
    const crons = o.crons ?? ["*/3 * * * * *"];
    const zones = o.timezones ?? ["UTC"];
    const [smin, smax] = o.sleepSeconds ?? [0.2, 1];
    const dagPlan = o.dags ?? [];
    const total = o.intervalJobs + o.cronJobs + dagPlan.length;
    const silenceToken = o.silentStretchesMs?.length ? await silenceUser(cluster) : null;
    // Leave time to create every job before the window opens (≈ 40 ms per job, generously).
    // A lead for creating the jobs over the API, enough on a loaded 2-core machine (creating 30 took over 5 s at load 20).
    // And 3 s for the watched job and rule of the silence count (the rule arms its watch: slower than a job on a loaded host).
    const windowStart = Math.ceil((Date.now() + 6_000 + total * 80 + (silenceToken ? 3_000 : 0)) / 1000) * 1000 + 137;
    const windowEnd = windowStart + o.windowMs;
    const silenceWatch: SilenceWatch | null = silenceToken
      ? await watchSilence(cluster, alertWatch.rx, silenceToken, o.silentStretchesMs!.map(([a, b]) => [windowStart + a, windowStart + b] as const))
      : null;
    const runAlertWatch: RunAlertWatch | null = silenceWatch ? await watchRunAlerts(cluster, alertWatch.rx, silenceToken!, silenceWatch.jobId) : null;

    const specs: Array<{ input: Record<string, unknown>; schedule: ChaosSchedule }> = [];
    for (let i = 0; i < total; i++) {
      const sleepS = Math.round((smin + ((smax - smin) * ((i * 7919) % 101)) / 100) * 10) / 10;
      const common = {
        name: `chaos-${i}`,
        ...(o.misfire ? { misfire: o.misfire } : {}),
        retry: { maxAttempts: 5, initial: "PT1S", max: "PT2S" },
        spec: { command: ledgerCommand(ledgerPath, sleepS), timeout: "PT30S" },
      };
      if (i < o.intervalJobs) {
        const everyMs = intervals[i % intervals.length]! * 1000;
        const startAt = windowStart + ((i * 211) % 1000);
        specs.push({
          input: { ...common, schedule: { kind: "INTERVAL", every: isoSeconds(everyMs), startAt: new Date(startAt).toISOString(), endAt: new Date(windowEnd).toISOString() } },
          schedule: { kind: "INTERVAL", everyMs, startAt, endAt: windowEnd },
        });
      } else {
        const cron = crons[i % crons.length]!;
        const timezone = zones[i % zones.length]!;
        specs.push({
          input: { ...common, schedule: { kind: "CRON", cron, timezone, startAt: new Date(windowStart).toISOString(), endAt: new Date(windowEnd).toISOString() } },
          schedule: { kind: "CRON", cron, timezone, startAt: windowStart, endAt: windowEnd },
        });
      }
    }
    const jobs: Array<{ id: string; schedule: ChaosSchedule }> = new Array(specs.length);
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < specs.length) {
          const i = next++;
          jobs[i] = { id: await cluster.createJob(specs[i]!.input), schedule: specs[i]!.schedule };
        }
      }),
    );
    const dags: ChaosDag[] = [];
    for (const [i, d] of dagPlan.entries()) {
      const tasks =
        d.shape === "diamond"
          ? [
              { key: "a", dependsOn: [] },
              { key: "b", dependsOn: ["a"] },
              { key: "c", dependsOn: ["a"] },
              { key: "d", dependsOn: ["b", "c"] },
            ]
          : [{ key: "a", dependsOn: [] }, ...[1, 2, 3, 4, 5].map((n) => ({ key: `b${n}`, dependsOn: ["a"] })), { key: "c", dependsOn: ["b1", "b2", "b3", "b4", "b5"] }];
      const everyMs = d.everySeconds * 1000;
      const startAt = windowStart + ((i * 157 + 503) % 1000);
      const id = await cluster.createDag({
        name: `chaos-dag-${i}-${d.shape}`,
        ...(o.misfire ? { misfire: o.misfire } : {}),
        schedule: { kind: "INTERVAL", every: isoSeconds(everyMs), startAt: new Date(startAt).toISOString(), endAt: new Date(windowEnd).toISOString() },
        tasks: tasks.map((t, j) => ({
          key: t.key,
          dependsOn: t.dependsOn,
          retry: { maxAttempts: 5, initial: "PT1S", max: "PT2S" },
          spec: { command: ledgerCommand(ledgerPath, 0.4 + ((i + j) % 4) / 5), timeout: "PT30S" },
        })),
      });
      dags.push({ id, schedule: { kind: "INTERVAL", everyMs, startAt, endAt: windowEnd }, tasks });
    }
    if (Date.now() >= windowStart) throw new Error(`creating ${total} jobs and DAGs took too long: the window had already opened`);
    mark(`${total - dags.length} jobs and ${dags.length} DAGs created; window ${new Date(windowStart).toISOString()} .. ${new Date(windowEnd).toISOString()}`);

    // Timed actions, in order.
    const background: Array<Promise<unknown>> = [];
    const since = () => `T+${((Date.now() - windowStart) / 1000).toFixed(1)}s`;
    for (const a of [...o.actions].sort((x, y) => x.atMs - y.atMs)) {
      const wait = windowStart + a.atMs - Date.now();
      if (wait > 0) await sleep(wait);
      mark(`${since()} ${a.label}`);
      const done = a.run(cluster).then((v) => mark(`${since()} ${a.label}: done${typeof v === "string" ? ` (${v})` : ""}`));
      if (a.background) background.push(done);
      else await done;
    }
    if (Date.now() < windowEnd) await sleep(windowEnd - Date.now());
    const failed = (await Promise.allSettled(background)).find((r) => r.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    mark("window closed; draining");

    const db = await cluster.db();
    // A scheduled DAG's timer job and its task runs have the DAG's id as their job id.
    const dagIds = dags.map((d) => d.id);
    const ids = [...jobs.map((j) => j.id), ...dagIds];
    // Drain: until nothing is open, for at most drainMaxMs, and never longer than drainStallMs
    // without progress (a backlog that still shrinks is waited for; a stuck one is reported).
    const drainStart = Date.now();
    let lastProgress = Date.now();
    let lastOpen = Infinity;
    let lastReport = 0;
    for (;;) {
      const open = await db.collection("runs").countDocuments({ jobId: { $in: ids }, status: { $in: OPEN } });
      const active =
        (await db.collection("jobs").countDocuments({ _id: { $in: ids as any }, status: "ACTIVE" })) +
        (await db.collection("dagRuns").countDocuments({ dagId: { $in: dagIds }, status: "RUNNING" }));
      if (open === 0 && active === 0) {
        mark(`drained in ${Math.round((Date.now() - drainStart) / 1000)} s`);
        break;
      }
      if (open + active < lastOpen) {
        lastOpen = open + active;
        lastProgress = Date.now();
      }
      if (Date.now() - lastReport > 10_000) {
        lastReport = Date.now();
        mark(`draining: ${open} runs open, ${active} jobs active`);
      }
      if (Date.now() - drainStart > (o.drainMaxMs ?? 90_000) || Date.now() - lastProgress > (o.drainStallMs ?? 30_000)) {
        mark(`drain incomplete: ${open} runs open, ${active} jobs active`);
        break;
      }
      await sleep(500);
    }
    await sleep(500);

    const runs = await db
      .collection("runs")
      .find({ jobId: { $in: ids } }, { projection: { spec: 0, outputTail: 0 } })
      .toArray();
    const { lines, malformed } = readLedger(ledgerPath, (n) => cluster.pidOfNode(n));
    if (malformed > 0) mark(`ledger: ${malformed} malformed lines`);
    const ends = new Map<string, number>();
    const kills: ReturnType<typeof supervisorKills> = [];
    for (const p of cluster.procs.values()) {
      if (p.role !== "executor") continue;
      const text = p.logSince(0);
      for (const [k, v] of executorEnds(text)) ends.set(k, v);
      kills.push(...supervisorKills(text));
    }
    const dagRuns = await db.collection("dagRuns").find({ dagId: { $in: dagIds } }, { projection: { _id: 1, dagId: 1, scheduledFor: 1, status: 1 } }).toArray();
    const inst = dagInstanceInput(dags, runs as any, lines);
    const report = analyze({ jobs: [...jobs, ...inst.jobs], runs: inst.runs, ledger: inst.ledger, events: cluster.events, executorEnds: ends, supervisorKills: kills });
    const dagReport = analyzeDags({ dags, dagRuns: dagRuns as any, runs: runs as any, ledger: lines });
    const faults = faultsFromEvents(cluster.events);
    const rec = recovery(report, faults, { leaseMs: isoSecondsToMs(o.cluster.lease ?? "PT3S"), events: cluster.events });
    // Attempts that had a start line from a killed executor and no end line: killed mid-run.
    const killedMidRun = countKilledMidRun(lines, cluster.events);
    const overload = { renewalKills: 0, deadlineKills: 0, handedBackLate: 0 };
    for (const p of cluster.procs.values()) {
      if (p.role !== "executor") continue;
      const text = p.logSince(0);
      overload.renewalKills += text.split("could not renew the lease in time").length - 1;
      overload.deadlineKills += text.split("its lease deadline passed").length - 1;
      overload.handedBackLate += text.split("too late to start them within their claim").length - 1;
    }
    const notableLogs: Record<string, string[]> = {};
    for (const p of cluster.procs.values()) {
      if (p.role === "redis") continue;
      const notable = p
        .logSince(0)
        .split("\n")
        .filter((l) => /"level":"(warn|error|fatal)"/.test(l));
      if (notable.length) notableLogs[p.name] = [`${notable.length} warn/error lines`, ...notable.slice(0, 5)];
    }
    const alerts = await accountDeadlines(db, alertWatch, ids, windowEnd);
    mark(`deadline alerts counted: ${alerts.expected} expected, ${alerts.received} received`);
    const silences = silenceWatch ? await accountSilences(db, silenceWatch) : null;
    if (silences) mark(`silence alerts counted: ${silences.expected} expected, ${silences.received} received, ${silences.resolved}/${silences.resolvable} resolved`);
    const runAlerts = runAlertWatch ? await accountRunAlerts(db, runAlertWatch) : null;
    if (runAlerts) mark(`run alerts counted: ${runAlerts.received}/${runAlerts.expected} received, ${runAlerts.recovered}/${runAlerts.recoveries} recoveries`);
    return { report, dags: dagReport, faults, recovery: rec, windowStart, windowEnd, killedMidRun, dir: cluster.dir, timeline, notableLogs, overload, alerts, silences, runAlerts };
  } finally {
    await cluster.stop();
    await alertWatch?.rx.close();
    mark("cluster stopped");
  }
}

/**
 * SIGKILLs an executor while it is running at least one attempt (an open `start` line in the
 * ledger from its pid), waiting up to `maxWaitMs` for one; kills anyway after that.
 */
export async function killExecutorMidRun(c: Cluster, name: string, maxWaitMs = 5_000): Promise<number> {
  return c.get(await executorMidRun(c, [name], maxWaitMs)).kill9();
}

/** The first of `names` seen running an attempt within maxWaitMs (else the first name). */
export async function executorMidRun(c: Cluster, names: string[], maxWaitMs = 5_000): Promise<string> {
  const deadline = Date.now() + maxWaitMs;
  while (Date.now() < deadline) {
    const { lines } = readLedger(c.ledgerPath, (n) => c.pidOfNode(n));
    const ended = new Set(lines.filter((l) => l.kind === "end").map((l) => `${l.runId}:${l.token}`));
    const busy = names.find((n) => lines.some((l) => l.kind === "start" && l.pid === c.get(n).pid && !ended.has(`${l.runId}:${l.token}`)));
    if (busy) return busy;
    await sleep(50);
  }
  return names[0]!;
}

function countKilledMidRun(lines: ReturnType<typeof readLedger>["lines"], events: Cluster["events"]): number {
  const ended = new Set(lines.filter((l) => l.kind === "end").map((l) => `${l.runId}:${l.token}`));
  let n = 0;
  for (const l of lines) {
    if (l.kind !== "start" || ended.has(`${l.runId}:${l.token}`)) continue;
    if (events.some((e) => e.kind === "kill9" && e.pid === l.pid)) n++;
  }
  return n;
}

/** `PT30S` → 30000 (the harness only uses whole seconds and minutes). */
export function isoSecondsToMs(iso: string): number {
  const m = /^PT(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?$/.exec(iso);
  if (!m || (!m[1] && !m[2])) throw new Error(`unsupported duration ${iso}`);
  return (Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 1000;
}

export interface FaultPlan {
  /** `kill -9` times (ms from the window start): an executor, a scheduler, an executor, … each a random one that is up. */
  killsAtMs: number[];
  /** How long a killed process stays down before its restart is begun. @default 3000 */
  downMs?: number;
  /** Redis `FLUSHALL` times. */
  flushAtMs?: number[];
  /** Redis `kill -9` and restart without persistence. */
  redisRestartAtMs?: number[];
  /** Faults of a Redis Cluster or Sentinel group (./redis-topology.ts), at their times. */
  redisFaults?: Array<{ atMs: number; fault: RedisFault }>;
  /** Seed of the victim choice (same seed, same victims when the same ones are up). @default 14 */
  seed?: number;
  /** Longest wait for a victim executor to be running an attempt before it is killed anyway. @default 2000 */
  midRunWaitMs?: number;
}

/**
 * Actions for a fault plan. Kills alternate between executors and schedulers; each picks, with a
 * seeded generator, one of the role that is up and not being restarted (an executor is killed while it runs an attempt when it has one
 * within `midRunWaitMs`), and restarts it `downMs` later in the background, so the next faults keep
 * their times however long a restart takes on a busy machine.
 */
export function faultActions(plan: FaultPlan): ChaosAction[] {
  let state = (plan.seed ?? 14) >>> 0 || 1;
  const rand = () => {
    // xorshift32: deterministic, no dependency.
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
  const busy = new Set<string>();
  const downMs = plan.downMs ?? 3_000;
  const actions: ChaosAction[] = [];
  for (const [i, atMs] of [...plan.killsAtMs].sort((a, b) => a - b).entries()) {
    const role = i % 2 === 0 ? "executor" : "scheduler";
    actions.push({
      atMs,
      label: `kill -9 a random ${role}`,
      background: true,
      run: async (c) => {
        // Executors and schedulers in turn (either when none of the other is up), a random one of the role.
        // On a loaded machine every process of both roles may still be restarting: wait (bounded) for one.
        const pick = () => {
          const up = [...c.procs.values()].filter((p) => (p.role === "scheduler" || p.role === "executor") && p.running && !busy.has(p.name));
          return up.some((p) => p.role === role) ? up.filter((p) => p.role === role) : up;
        };
        let candidates = pick();
        for (const until = Date.now() + 60_000; candidates.length === 0 && Date.now() < until; candidates = pick()) await sleep(100);
        if (candidates.length === 0) throw new Error("no scheduler or executor up to kill within 60 s");
        const victim = candidates[Math.floor(rand() * candidates.length)]!;
        busy.add(victim.name);
        try {
          const pid = victim.pid;
          const at = victim.role === "executor" ? await killExecutorMidRun(c, victim.name, plan.midRunWaitMs ?? 2_000) : await victim.kill9();
          await sleep(downMs);
          await victim.start();
          return `${victim.name} pid ${pid} killed at ${new Date(at).toISOString()}, restarted`;
        } finally {
          busy.delete(victim.name);
        }
      },
    });
  }
  for (const atMs of plan.flushAtMs ?? []) actions.push({ atMs, label: "redis FLUSHALL", run: (c) => c.flushRedis() });
  for (const atMs of plan.redisRestartAtMs ?? []) actions.push({ atMs, label: "redis kill -9 and restart (no persistence)", run: (c) => c.restartRedis() });
  for (const { atMs, fault } of plan.redisFaults ?? []) actions.push({ atMs, label: `redis ${fault.replace("_", " ")}`, run: (c) => c.redisFault(fault) });
  return actions.sort((a, b) => a.atMs - b.atMs);
}
