/**
 * A throw-away multi-process Kairos deployment for the benchmarks, on one machine:
 *
 *   - the MongoDB emulator in its own process (`packages/mongo-emulator/src/bin.ts --port 0`, in memory: no
 *     journal, like the private Redis has no persistence);
 *   - `scheduler` and `executor` roles as separate processes (`node --import tsx src/main.ts <role>`),
 *     exactly as a deployment starts them, configured only through the environment;
 *   - a client in the bench process (JobService / RunService over the same stores), which plays
 *     the API: it creates jobs through `JobService.create`, the code the GraphQL mutation calls.
 *
 * Every child is killed if the bench process exits without stopping it. With `cpuProfDir`, every
 * child runs with `--cpu-prof` and writes a V8 profile there when it exits (normal shutdown only).
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { Redis } from "ioredis";
import { JobService } from "../../src/core/jobs/index.js";
import { RunService } from "../../src/core/runs/index.js";
import { silentLogger } from "../../src/support/log.js";
import type { SharedState } from "../../src/shared-state/ports.js";
import { createRedisClient, createRedisSharedState, redisKeys, type RedisClient, type RedisTarget } from "../../src/shared-state/redis/index.js";
import { isCluster, onEachNode, redisEnv } from "./redis.js";
import { connectMongo, type Mongo } from "../../src/store/mongo.js";
import { freePort } from "./redis.js";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Where the bench compiles src/ (gitignored; dist/ is left alone). */
export const BUILD_DIR = join(REPO_ROOT, ".kairos", "bench-dist");
/** The emulator workspace package: its sources, and where the bench compiles them. */
const EMULATOR_DIR = join(REPO_ROOT, "packages", "mongo-emulator");
const EMULATOR_BUILD_DIR = join(BUILD_DIR, "mongo-emulator");

/**
 * How the Kairos processes run:
 * - `compiled` (default): `node .kairos/bench-dist/main.js <role>`, the output of `tsc -p
 *   tsconfig.build.json` — what `kairos <role>` (bin/kairos.js → dist/) runs in production;
 * - `tsx`: `node --import tsx src/main.ts <role>`, straight from the sources. The TypeScript loader
 *   makes every process larger (an executor: ~150 MB RSS instead of ~105 MB), and since the
 *   executor forks a process per run, a larger executor pays more for every fork.
 */
export type Runtime = "compiled" | "tsx";

function entry(runtime: Runtime, what: "main" | "emulator"): string {
  if (runtime === "tsx") return what === "main" ? join(REPO_ROOT, "src", "main.ts") : join(EMULATOR_DIR, "src", "bin.ts");
  return what === "main" ? join(BUILD_DIR, "main.js") : join(EMULATOR_BUILD_DIR, "bin.js");
}

let building: Promise<string> | undefined;
/**
 * Runs tsc on `project` into `outDir` (incremental). Type errors in a work-in-progress tree do not
 * stop tsc from emitting; the build counts as usable when `expect` was written, and the errors are
 * returned as a warning.
 */
function tsc(project: string, outDir: string, expect: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const bin = join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");
    const args = [bin, "-p", project, "--outDir", outDir, "--tsBuildInfoFile", join(outDir, ".tsbuildinfo")];
    execFile(process.execPath, args, { cwd: REPO_ROOT, maxBuffer: 16 << 20 }, (err, stdout) => {
      if (!existsSync(join(outDir, expect))) return reject(new Error(`tsc did not produce ${outDir}/${expect}: ${stdout || err?.message}`));
      resolve(err ? `tsc reported errors (output used anyway): ${stdout.split("\n").slice(0, 3).join(" | ")}` : "");
    });
  });
}

/** Compiles src/ into .kairos/bench-dist, and the emulator package beside it, once per bench process. */
export function buildKairos(): Promise<string> {
  building ??= Promise.all([
    tsc(join(REPO_ROOT, "tsconfig.build.json"), BUILD_DIR, "main.js"),
    tsc(join(EMULATOR_DIR, "tsconfig.build.json"), EMULATOR_BUILD_DIR, "bin.js"),
  ]).then((warnings) => warnings.filter(Boolean).join("; "));
  return building;
}
/** tsx's loader by absolute URL: the role processes run in their own temp cwd. */
const TSX = import.meta.resolve("tsx");
/** Replaces the executor's src/executor/process.ts with a no-op (bench/lib/noop-process.mjs). */
const NOOP_HOOKS = new URL("./noop-process-hooks.mjs", import.meta.url).href;
/** The line bench/lib/noop-process.mjs writes when it is loaded (as counted by Child.logCounts). */
export const NOOP_LOADED = "info bench: runProcess is a no-op (bench/lib/noop-process.mjs)";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** CPU time (ms, user + system) a process has used so far, from /proc; NaN when it is gone. */
export function processCpuMs(pid: number | undefined): number {
  if (!pid) return Number.NaN;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, 10 ms ticks
  } catch {
    return Number.NaN;
  }
}

/** CPU (ms) used by the reaped children of a process (cutime + cstime): the runs an executor spawned. */
export function childrenCpuMs(pid: number | undefined): number {
  if (!pid) return Number.NaN;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** One child process with a bounded stop and a record of the log lines it wrote. */
export class Child {
  /** Count of log lines by "level msg" (the roles log JSON at warn and above). */
  readonly logCounts = new Map<string, number>();
  /** The first few lines written, for diagnostics. */
  readonly firstLines: string[] = [];
  /** One full sample line per distinct log key. */
  readonly samples = new Map<string, string>();
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly onExit: () => void;

  constructor(
    readonly name: string,
    readonly proc: ChildProcess,
    private readonly cpuProfDir?: string,
  ) {
    this.exited = new Promise((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal })));
    this.onExit = () => this.kill();
    process.once("exit", this.onExit);
    const take = (line: string) => {
      let key = line.slice(0, 160);
      try {
        const o = JSON.parse(line) as { level?: string; msg?: string };
        if (o && typeof o === "object" && o.msg) key = `${o.level ?? "?"} ${o.msg}`;
      } catch {
        // not JSON: keep the raw line
      }
      this.logCounts.set(key, (this.logCounts.get(key) ?? 0) + 1);
      if (!this.samples.has(key)) this.samples.set(key, line.slice(0, 600));
      if (this.firstLines.length < 10) this.firstLines.push(line.slice(0, 400));
    };
    if (proc.stdout) createInterface({ input: proc.stdout }).on("line", take);
    if (proc.stderr) createInterface({ input: proc.stderr }).on("line", take);
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  get alive(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** SIGTERM, then SIGKILL after `timeoutMs`. Resolves when the process is gone. */
  async stop(timeoutMs = 20_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.alive) {
      this.proc.kill("SIGTERM");
      const t = setTimeout(() => this.kill(), timeoutMs);
      t.unref();
      const r = await this.exited;
      clearTimeout(t);
      process.off("exit", this.onExit);
      nameProfiles(this.cpuProfDir, this.pid, this.name);
      return r;
    }
    process.off("exit", this.onExit);
    nameProfiles(this.cpuProfDir, this.pid, this.name);
    return this.exited;
  }

  kill(): void {
    if (this.alive) this.proc.kill("SIGKILL");
  }

  /** "warn lost shard lease ×3; error … (first: {…})" — the log lines this child wrote, for the notes. */
  logSummary(): string | null {
    if (this.logCounts.size === 0) return null;
    return [...this.logCounts.entries()]
      .map(([k, n]) => {
        const sample = this.samples.get(k) ?? "";
        const err = /"err":\{[^}]*?"message":"([^"]{0,160})/.exec(sample)?.[1];
        return `${k}${n > 1 ? ` ×${n}` : ""}${err ? ` (e.g. ${err})` : ""}`;
      })
      .join("; ");
  }
}

function nodeArgs(runtime: Runtime, script: string, args: string[], cpuProfDir: string | undefined, imports: string[] = []): string[] {
  // Default profile names (CPU.<date>.<time>.<pid>.<thread>.<seq>): with tsx the module loader runs
  // on a thread of its own, which writes a profile too; a fixed name would let it overwrite the
  // main thread's. Child.stop() renames them after the role.
  const prof = cpuProfDir ? ["--cpu-prof", "--cpu-prof-dir", cpuProfDir] : [];
  return [...prof, ...(runtime === "tsx" ? ["--import", TSX] : []), ...imports.flatMap((i) => ["--import", i]), script, ...args];
}

/** Renames the profiles a process wrote to `<name>.<pid>.<thread>.cpuprofile`. */
function nameProfiles(dir: string | undefined, pid: number | undefined, name: string): void {
  if (!dir || !pid) return;
  for (const f of readdirSync(dir)) {
    const m = /^CPU\.\d+\.\d+\.(\d+)\.(\d+)\.\d+\.cpuprofile$/.exec(f);
    if (m && Number(m[1]) === pid) renameSync(join(dir, f), join(dir, `${name}.${pid}.${m[2] === "0" ? "main" : `thread${m[2]}`}.cpuprofile`));
  }
}

/** Starts the emulator in its own process (in memory) and resolves with its URI once it listens. */
export async function startEmulatorProcess(opts: { cpuProfDir?: string; timeoutMs?: number; runtime?: Runtime } = {}): Promise<{ uri: string; child: Child }> {
  const runtime = opts.runtime ?? "compiled";
  if (runtime === "compiled") await buildKairos();
  const proc = spawn(process.execPath, nodeArgs(runtime, entry(runtime, "emulator"), ["--port", "0"], opts.cpuProfDir), {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const child = new Child("emulator", proc, opts.cpuProfDir);
  const uri = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("emulator did not start listening in time")), opts.timeoutMs ?? 30_000);
    createInterface({ input: proc.stdout! }).on("line", (line) => {
      try {
        const o = JSON.parse(line) as { uri?: string };
        if (o.uri) {
          clearTimeout(t);
          resolve(o.uri);
        }
      } catch {
        // ignore
      }
    });
    proc.once("exit", (code) => {
      clearTimeout(t);
      reject(new Error(`emulator exited with code ${code}: ${child.firstLines.join(" | ")}`));
    });
  }).catch((e) => {
    child.kill();
    throw e;
  });
  return { uri, child };
}

export interface ClusterOptions {
  mongoUrl: string;
  /** A redis:// URL, or a Redis Cluster or Sentinel target. */
  redisUrl: string | RedisTarget;
  /** Database name (fresh per bench shape). */
  mongoDb: string;
  /** KAIROS_REDIS_PREFIX (fresh per bench shape). */
  prefix: string;
  /** KAIROS_SHARDS. @default 64 */
  shards?: number;
  /** KAIROS_STAGE_AHEAD in ms (0: off). The bench's own JobService arms timers to match. @default 0 (bench/kairos.ts passes 10 s, the product default) */
  stageAheadMs?: number;
  cpuProfDir?: string;
  /** @default "compiled" */
  runtime?: Runtime;
}

const EVENT_START = '{"_id":"';
const STATUS = '"status":"';

/** The Kairos processes of one bench shape, and a client over the same stores. */
export class KairosCluster {
  readonly schedulers: Child[] = [];
  readonly executors: Child[] = [];
  /** API processes (`startApi`), for the benches that go through GraphQL. */
  readonly apis: Child[] = [];
  private readonly workDir: string;
  private client?: { mongo: Mongo; state: SharedState; jobs: JobService; runs: RunService };
  private readonly redis: RedisClient;

  constructor(readonly o: ClusterOptions) {
    this.workDir = mkdtempSync(join(tmpdir(), "kairos-bench-"));
    this.redis = createRedisClient(o.redisUrl, { maxRetriesPerRequest: 3 });
    this.redis.on("error", () => {});
  }

  /** A plain command connection to the deployment's Redis (for counters and inspection). */
  get redisClient(): RedisClient {
    return this.redis;
  }

  get shards(): number {
    return this.o.shards ?? 64;
  }

  get keys() {
    return redisKeys(this.o.prefix);
  }

  private env(role: string, extra: Record<string, string>): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    // Inherit the basics, but no KAIROS_* / MONGO_* / REDIS_* setting from the caller's shell.
    for (const [k, v] of Object.entries(process.env)) {
      if (/^(KAIROS_|MONGO_|REDIS_)/.test(k)) continue;
      env[k] = v;
    }
    return {
      ...env,
      MONGO_URL: this.o.mongoUrl,
      MONGO_DB: this.o.mongoDb,
      ...redisEnv(this.o.redisUrl),
      KAIROS_REDIS_PREFIX: this.o.prefix,
      KAIROS_SHARDS: String(this.shards),
      KAIROS_STAGE_AHEAD: `PT${(this.o.stageAheadMs ?? 0) / 1000}S`,
      KAIROS_LOG_LEVEL: "warn",
      // The benches queue one user's runs far past the default bound on runs waiting to start
      // (bench/kairos.ts: a burst of 20,000 one-off jobs due at one instant; bench/dag.ts: DAG runs
      // of 1,000 tasks). The bound is raised, not turned off, so what checking it costs (a count
      // per owner per second, the reservations of the fire path) is in the figures.
      KAIROS_MAX_WAITING_RUNS: "100000000",
      // tsx looks for tsconfig.json from the cwd, which is a temp dir here.
      TSX_TSCONFIG_PATH: join(REPO_ROOT, "tsconfig.json"),
      KAIROS_NODE_NAME: `${role}-${this.o.prefix}`,
      ...extra,
    };
  }

  private spawnRole(role: "scheduler" | "executor" | "api", name: string, extra: Record<string, string>, imports: string[] = []): Child {
    const cwd = join(this.workDir, name);
    mkdirSync(cwd, { recursive: true }); // the executor's run work dirs go to <cwd>/.kairos/work
    const runtime = this.o.runtime ?? "compiled";
    const proc = spawn(process.execPath, nodeArgs(runtime, entry(runtime, "main"), [role], this.o.cpuProfDir, imports), {
      cwd,
      env: this.env(role, extra),
      stdio: ["ignore", "pipe", "pipe"],
    });
    return new Child(name, proc, this.o.cpuProfDir);
  }

  /**
   * Starts `count` executor processes with `slots` each and waits until they all pull. With
   * `noop`, each runs the real executor with src/executor/process.ts replaced by a no-op (no OS
   * process per run; bench/lib/noop-process-hooks.mjs), and the substitution is checked.
   */
  async startExecutors(count: number, slots: number, opts: { noop?: boolean; timeoutMs?: number; env?: Record<string, string> } = {}): Promise<void> {
    if ((this.o.runtime ?? "compiled") === "compiled") await buildKairos();
    const started: Child[] = [];
    for (let i = 0; i < count; i++) {
      const c = this.spawnRole("executor", `executor-${this.executors.length + 1}`, { KAIROS_EXECUTOR_SLOTS: String(slots), ...opts.env }, opts.noop ? [NOOP_HOOKS] : []);
      this.executors.push(c);
      started.push(c);
    }
    const timeoutMs = opts.timeoutMs ?? 60_000;
    // An executor subscribes to its pool's wake channel, then to the cancel channel, then pulls.
    const cancel = this.keys.channel("kairos:cancel");
    // On a Cluster each subscriber listens on one node, and NUMSUB counts a node's own: sum them.
    const numsub = async () => {
      const counts = await onEachNode(this.redis, "all", async (n) => Number(((await n.pubsub("NUMSUB", cancel)) as [string, number])[1]));
      return counts.reduce((a, b) => a + b, 0);
    };
    await this.waitFor(async () => (await numsub()) >= this.executors.length, timeoutMs, "executors");
    if (opts.noop) {
      for (const c of started) {
        if (!c.logCounts.has(NOOP_LOADED)) throw new Error(`${c.name}: the no-op process module was not loaded; the executor would spawn processes`);
        c.logCounts.delete(NOOP_LOADED);
      }
    }
  }

  /** Starts `count` scheduler processes and waits until every shard is held and each one holds some. */
  async startSchedulers(count: number, timeoutMs = 60_000): Promise<void> {
    if (count === 0) return;
    if ((this.o.runtime ?? "compiled") === "compiled") await buildKairos();
    for (let i = 0; i < count; i++) this.schedulers.push(this.spawnRole("scheduler", `scheduler-${this.schedulers.length + 1}`, {}));
    const want = this.schedulers.length;
    await this.waitFor(
      async () => {
        const holders = await this.shardHolders();
        return holders.every((h) => h !== null) && new Set(holders).size === want;
      },
      timeoutMs,
      "schedulers",
    );
  }

  /**
   * Starts an `api` process on a free loopback port with the bootstrap admin `admin` /
   * `adminPassword` and waits until /healthz answers; resolves with the GraphQL URL.
   */
  async startApi(adminPassword: string, extra: Record<string, string> = {}, timeoutMs = 60_000): Promise<string> {
    if ((this.o.runtime ?? "compiled") === "compiled") await buildKairos();
    const port = await freePort();
    const child = this.spawnRole("api", `api-${this.apis.length + 1}`, {
      KAIROS_HOST: "127.0.0.1",
      KAIROS_PORT: String(port),
      KAIROS_JWT_SECRET: randomBytes(32).toString("hex"),
      KAIROS_ADMIN_PASSWORD: adminPassword,
      ...extra,
    });
    this.apis.push(child);
    const base = `http://127.0.0.1:${port}`;
    await this.waitFor(() => fetch(`${base}/healthz`).then((r) => r.ok, () => false), timeoutMs, "api");
    return `${base}/graphql`;
  }

  /** The member holding each shard's lease (null when free). */
  async shardHolders(): Promise<Array<string | null>> {
    // One read per shard (auto-pipelined on one server): a Cluster pipeline cannot span slots.
    const replies = await Promise.all(Array.from({ length: this.shards }, (_, s) => this.redis.hmget(this.keys.shard(s).lease, "holder", "expiresAt")));
    const now = Date.now();
    return replies.map(([holder, expiresAt]) => (holder && Number(expiresAt) > now ? holder : null));
  }

  private async waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      const dead = [...this.schedulers, ...this.executors, ...this.apis].find((c) => !c.alive);
      if (dead) throw new Error(`${dead.name} exited during start-up: ${dead.firstLines.join(" | ")}`);
      if (Date.now() > deadline) throw new Error(`${what} not ready within ${timeoutMs} ms`);
      await sleep(100);
    }
  }

  /** The bench's own JobService/RunService over the cluster's stores (the API's code path). */
  async connect(): Promise<{ mongo: Mongo; state: SharedState; jobs: JobService; runs: RunService }> {
    if (this.client) return this.client;
    const log = silentLogger();
    const mongo = await connectMongo(this.o.mongoUrl, this.o.mongoDb, { appName: "kairos-bench" });
    const state = await createRedisSharedState({ url: this.o.redisUrl, prefix: this.o.prefix, shardCount: this.shards });
    const runs = new RunService({ mongo, state, clock: Date.now, log });
    const jobs = new JobService({ mongo, state, runs, clock: Date.now, log, defaultCatchupWindowMs: 3_600_000, stageAheadMs: this.o.stageAheadMs ?? 0 });
    this.client = { mongo, state, jobs, runs };
    return this.client;
  }

  /** Subscribes to the run events on the bus (what GraphQL subscriptions use) and counts statuses. */
  async watchRuns(): Promise<{ counts: Map<string, number>; stop(): Promise<void> }> {
    const sub = createRedisClient(this.o.redisUrl) as Redis;
    sub.on("error", () => {});
    const channel = this.keys.channel("kairos:events:runs");
    const counts = new Map<string, number>();
    sub.on("message", (_ch: string, msg: string) => {
      // A message is a JSON array of run events (src/core/events.ts encodeRun: `_id` first, the
      // run's own `status` before its history). Only statuses are needed: scanned, not parsed,
      // so the watcher takes as little CPU from the system under test as it can.
      for (let i = msg.indexOf(EVENT_START); i >= 0; i = msg.indexOf(EVENT_START, i + 1)) {
        const s = msg.indexOf(STATUS, i) + STATUS.length;
        const status = msg.slice(s, msg.indexOf('"', s));
        counts.set(status, (counts.get(status) ?? 0) + 1);
      }
    });
    await sub.subscribe(channel);
    return {
      counts,
      stop: async () => {
        await sub.quit().catch(() => sub.disconnect());
      },
    };
  }

  /** Timers armed + in flight over all shards, and the default pool's ready queue length. */
  async pipelineDepth(pool = "default"): Promise<{ armed: number; inflight: number; ready: number }> {
    // One command per key, not one pipeline: on a Cluster the shards' keys lie in different slots.
    // Armed counts the timers due within a minute: a wheel also holds timers far ahead (an alert
    // deadline an hour after its slot) that are no fire waiting.
    const shards = Array.from({ length: this.shards }, (_, s) => this.keys.shard(s));
    const soon = Date.now() + 60_000;
    const [armed, inflight, ready] = await Promise.all([
      Promise.all(shards.map((k) => this.redis.zcount(k.wheel, "-inf", soon))),
      Promise.all(shards.map((k) => this.redis.zcard(k.inflight))),
      this.redis.zcard(this.keys.ready(pool)),
    ]);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    return { armed: sum(armed), inflight: sum(inflight), ready };
  }


  /** The private redis-server's pid (from INFO), for CPU accounting. */
  /** The redis-server processes (every node of a Cluster), for the CPU figures. */
  async redisPids(): Promise<number[]> {
    const pids = await onEachNode(this.redis, "all", async (n) => /process_id:(\d+)/.exec(await n.info("server"))?.[1]);
    return pids.filter((p): p is string => p !== undefined).map(Number);
  }

  /** CPU ms per process so far; "runs" = CPU of the processes the executors spawned and reaped. */
  cpu(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const c of [...this.schedulers, ...this.executors, ...this.apis]) out[c.name] = processCpuMs(c.pid);
    let runs = 0;
    for (const c of this.executors) runs += childrenCpuMs(c.pid);
    out["run processes"] = runs;
    return out;
  }

  /** Stops the role processes (executors drain first); returns a note per process that logged. */
  stopRoles(): Promise<string[]> {
    return (this.rolesStopped ??= this.stopRolesOnce());
  }

  private rolesStopped?: Promise<string[]>;

  private async stopRolesOnce(): Promise<string[]> {
    await Promise.all(this.apis.map((c) => c.stop()));
    await Promise.all(this.executors.map((c) => c.stop()));
    await Promise.all(this.schedulers.map((c) => c.stop()));
    const notes: string[] = [];
    for (const c of [...this.schedulers, ...this.executors, ...this.apis]) {
      const s = c.logSummary();
      if (s) notes.push(`${c.name} logged: ${s}`);
    }
    return notes;
  }

  /** Stops every process, drops the database and deletes the prefix's Redis keys. */
  async stop(): Promise<string[]> {
    const notes = this.rolesStopped ? [] : await this.stopRoles();
    if (this.client) {
      await this.client.mongo.db.dropDatabase().catch(() => undefined);
      await this.client.state.close().catch(() => undefined);
      await this.client.mongo.close().catch(() => undefined);
    }
    // On a Cluster, SCAN each primary and delete key by key (a DEL cannot span slots).
    const oneByOne = isCluster(this.redis);
    await onEachNode(this.redis, "master", async (node) => {
      let cursor = "0";
      do {
        const [next, keys] = await node.scan(cursor, "MATCH", this.keys.pattern, "COUNT", 1000);
        cursor = next;
        if (keys.length) await (oneByOne ? Promise.all(keys.map((k) => node.del(k))) : node.del(...keys));
      } while (cursor !== "0");
    });
    await this.redis.quit().catch(() => this.redis.disconnect());
    rmSync(this.workDir, { recursive: true, force: true });
    return notes;
  }
}
