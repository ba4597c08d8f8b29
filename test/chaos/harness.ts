/**
 * A cluster of real OS processes for chaos tests: a private redis-server, the MongoDB emulator,
 * one API, N schedulers and M executors, each started as `node --import tsx src/main.ts <role>`
 * with its own log file in a temp dir, everything on 127.0.0.1.
 *
 * Any process can be killed with SIGKILL, restarted, frozen (SIGSTOP) and thawed (SIGCONT). Every
 * such event is recorded with its time and pid (`events`), so an analysis can tell which attempt
 * died with which executor. `stop()` ends everything with bounded waits (SIGTERM, then SIGKILL),
 * and a process-exit hook kills whatever is left if the caller crashes first.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Redis } from "ioredis";
import { createRedisClient } from "../../src/shared-state/index.js";
import { MongoClient, type Db } from "mongodb";
import { freePort } from "../support/local-redis.js";
import { startChaosRedis, type ChaosRedis, type RedisFault, type RedisMode } from "./redis-topology.js";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const MAIN = join(REPO_ROOT, "src", "main.ts");
const TSX_LOADER = pathToFileURL(join(REPO_ROOT, "node_modules", "tsx", "dist", "loader.mjs")).href;
const TSCONFIG = join(REPO_ROOT, "tsconfig.json");

export const ADMIN = { username: "admin", password: "chaos-admin-password" };
const JWT_SECRET = "chaos-harness-jwt-secret-0123456789abcdef";

export type Role = "redis" | "emulator" | "api" | "scheduler" | "executor";

export interface ProcessEvent {
  name: string;
  /** `ready`: the process passed its readiness check (a scheduler is serving from then on). */
  kind: "start" | "ready" | "kill9" | "term" | "stop" | "cont" | "exit" | "flushall" | "failover" | "reshard";
  at: number;
  pid: number;
  code?: number | null;
  signal?: string | null;
}

export interface ClusterOptions {
  schedulers: number;
  executors: number;
  /** Time-wheel shards. @default 64 */
  shards?: number;
  /** Run lease (ISO-8601). @default PT3S */
  lease?: string;
  /** Slots per executor. @default 8 */
  slots?: number;
  /** @default info */
  logLevel?: string;
  /** Extra environment for every Kairos process. */
  env?: Record<string, string>;
  /** Keep the temp dir (logs, ledger) after stop. @default false */
  keepDir?: boolean;
  /** Print process events to stderr. @default false */
  verbose?: boolean;
  /** One redis-server, a Redis Cluster or a Sentinel group (./redis-topology.ts). @default single */
  redis?: RedisMode;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `fn` until it returns something truthy, or throws after `timeoutMs` naming `what`. */
export async function waitUntil<T>(what: string, fn: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs: number, stepMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await sleep(stepMs);
  }
}

const live = new Set<ChildProcess>();
let exitHook = false;
function installExitHook(): void {
  if (exitHook) return;
  exitHook = true;
  // Last resort: the caller crashed or exited without stop(). SIGCONT first so a frozen process can die.
  process.once("exit", () => {
    for (const c of live) {
      try {
        c.kill("SIGCONT");
        c.kill("SIGKILL");
      } catch {
        // gone
      }
    }
  });
}

/** One OS process of the cluster. `start()` may be called again after it exited (a restart). */
export class ManagedProcess {
  child: ChildProcess | null = null;
  /** Resolves when the current child exits. */
  private exited: Promise<void> = Promise.resolve();
  frozen = false;

  constructor(
    readonly name: string,
    readonly role: Role,
    private readonly command: string,
    private readonly args: string[],
    private readonly env: Record<string, string>,
    private readonly cwd: string,
    readonly logPath: string,
    private readonly record: (e: ProcessEvent) => void,
    private readonly ready: (p: ManagedProcess, logOffset: number) => Promise<unknown>,
  ) {}

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Spawns the process and waits until it is ready (bounded). */
  async start(readyTimeoutMs = 120_000): Promise<void> {
    if (this.running) throw new Error(`${this.name} is already running (pid ${this.pid})`);
    const fd = openSync(this.logPath, "a");
    writeSync(fd, `\n===== ${new Date().toISOString()} harness: starting ${this.name} =====\n`);
    const offset = existsSync(this.logPath) ? readFileSync(this.logPath).length : 0;
    const child = spawn(this.command, this.args, { cwd: this.cwd, env: this.env, stdio: ["ignore", fd, fd] });
    closeSync(fd);
    this.child = child;
    this.frozen = false;
    live.add(child);
    installExitHook();
    const pid = child.pid ?? -1;
    this.record({ name: this.name, kind: "start", at: Date.now(), pid });
    this.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        live.delete(child);
        this.record({ name: this.name, kind: "exit", at: Date.now(), pid, code, signal });
        resolve();
      });
      child.once("error", () => resolve());
    });
    try {
      await Promise.race([
        this.ready(this, offset),
        this.exited.then(() => {
          throw new Error(`${this.name} exited during start; see ${this.logPath}:\n${tail(this.logPath, 2_000)}`);
        }),
        sleep(readyTimeoutMs).then(() => {
          throw new Error(`${this.name} not ready within ${readyTimeoutMs} ms; see ${this.logPath}:\n${tail(this.logPath, 2_000)}`);
        }),
      ]);
      this.record({ name: this.name, kind: "ready", at: Date.now(), pid });
    } catch (e) {
      await this.kill9().catch(() => undefined);
      throw e;
    }
  }

  private signal(sig: NodeJS.Signals): number {
    const pid = this.pid;
    if (pid === null || !this.running) throw new Error(`${this.name} is not running`);
    process.kill(pid, sig);
    return pid;
  }

  /** SIGKILL and wait for the exit (bounded). Returns the kill time. */
  async kill9(): Promise<number> {
    if (!this.running) return Date.now();
    const at = Date.now();
    const pid = this.signal("SIGKILL");
    this.record({ name: this.name, kind: "kill9", at, pid });
    await Promise.race([this.exited, sleep(10_000)]);
    return at;
  }

  /** SIGSTOP: the process freezes; its run process groups keep running. */
  freeze(): number {
    const at = Date.now();
    const pid = this.signal("SIGSTOP");
    this.frozen = true;
    this.record({ name: this.name, kind: "stop", at, pid });
    return at;
  }

  thaw(): number {
    const at = Date.now();
    const pid = this.signal("SIGCONT");
    this.frozen = false;
    this.record({ name: this.name, kind: "cont", at, pid });
    return at;
  }

  /** SIGTERM (graceful), then SIGKILL after `graceMs`. */
  async terminate(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    const pid = this.pid!;
    if (this.frozen) this.thaw();
    this.record({ name: this.name, kind: "term", at: Date.now(), pid });
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      return;
    }
    const done = await Promise.race([this.exited.then(() => true), sleep(graceMs).then(() => false)]);
    if (!done) await this.kill9();
  }

  async restart(readyTimeoutMs?: number): Promise<void> {
    await this.kill9();
    await this.start(readyTimeoutMs);
  }

  /** The log text written since `offset` bytes. */
  logSince(offset = 0): string {
    try {
      return readFileSync(this.logPath).subarray(offset).toString("utf8");
    } catch {
      return "";
    }
  }
}

function tail(path: string, bytes: number): string {
  try {
    const buf = readFileSync(path);
    return buf.subarray(Math.max(0, buf.length - bytes)).toString("utf8");
  } catch {
    return "(no log)";
  }
}

async function waitForLog(p: ManagedProcess, offset: number, pattern: RegExp, timeoutMs = 120_000): Promise<void> {
  await waitUntil(`${p.name} to log ${pattern}`, () => pattern.test(p.logSince(offset)), timeoutMs, 100);
}

export interface GqlResult<T> {
  data?: T;
  errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
}

/** The cluster: shared infrastructure plus named Kairos processes. */
export class Cluster {
  readonly events: ProcessEvent[] = [];
  readonly procs = new Map<string, ManagedProcess>();
  redisUrl = "";
  mongoUrl = "";
  apiUrl = "";
  token = "";
  private mongoClient: MongoClient | null = null;
  private redisClient: Redis | null = null;
  /** The Redis Cluster or Sentinel group, when the cluster does not run on one redis-server. */
  private topology: ChaosRedis | null = null;
  readonly prefix = "kairos";
  /** A directory every sandboxed job may write to (KAIROS_SANDBOX_RW_PATHS): the ledgers live here. */
  get sharedDir(): string {
    return join(this.dir, "shared");
  }

  /** Where chaos jobs append their start/end lines (see ledger.ts). */
  get ledgerPath(): string {
    return join(this.sharedDir, "ledger.txt");
  }

  /** Executor node ids (one per process life) and their pids. */
  private readonly nodePids = new Map<string, number>();

  /** The pid of the executor process that ran as node `nodeId` (-1 if unknown). */
  pidOfNode(nodeId: string): number {
    return this.nodePids.get(nodeId) ?? -1;
  }

  private constructor(
    readonly dir: string,
    readonly opts: Required<Omit<ClusterOptions, "env">> & { env: Record<string, string> },
  ) {}

  static async start(options: ClusterOptions): Promise<Cluster> {
    const dir = mkdtempSync(join(tmpdir(), "kairos-chaos-"));
    // The slots' users pass through to the shared directory, and may write in it.
    chmodSync(dir, 0o711);
    mkdirSync(join(dir, "shared"));
    chmodSync(join(dir, "shared"), 0o777);
    const opts = {
      shards: 64,
      lease: "PT3S",
      slots: 8,
      logLevel: "info",
      env: {},
      keepDir: false,
      verbose: false,
      redis: "single" as RedisMode,
      ...options,
    };
    const c = new Cluster(dir, opts);
    try {
      await c.startInfrastructure();
      await c.addProcess("api", "api");
      await Promise.all([
        ...Array.from({ length: opts.schedulers }, (_, i) => c.addProcess(`scheduler-${i + 1}`, "scheduler")),
        ...Array.from({ length: opts.executors }, (_, i) => c.addProcess(`executor-${i + 1}`, "executor")),
      ]);
      c.token = await c.login(ADMIN.username, ADMIN.password);
    } catch (e) {
      await c.stop();
      throw e;
    }
    return c;
  }

  private recordEvent = (e: ProcessEvent) => {
    this.events.push(e);
    if (this.opts.verbose) process.stderr.write(`[harness] ${new Date(e.at).toISOString()} ${e.name} ${e.kind} pid=${e.pid}${e.code != null ? ` code=${e.code}` : ""}${e.signal ? ` signal=${e.signal}` : ""}\n`);
  };

  private async startInfrastructure(): Promise<void> {
    if (this.opts.redis !== "single") this.topology = await startChaosRedis(this.opts.redis);
    else await this.startRedis();
    await this.startEmulator();
  }

  private async startRedis(): Promise<void> {
    const redisPort = await freePort();
    const redisDir = join(this.dir, "redis");
    mkdirp(redisDir);
    const redis = new ManagedProcess(
      "redis",
      "redis",
      "redis-server",
      ["--port", String(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", redisDir, "--loglevel", "warning"],
      { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      redisDir,
      join(this.dir, "redis.log"),
      this.recordEvent,
      async () =>
        waitUntil("redis PING", async () => {
          const r = createRedisClient(`redis://127.0.0.1:${redisPort}`, { lazyConnect: true, maxRetriesPerRequest: 0, noReconnect: true });
          r.on("error", () => undefined);
          try {
            await r.connect();
            return (await r.ping()) === "PONG";
          } finally {
            r.disconnect();
          }
        }, 10_000, 50),
    );
    this.procs.set("redis", redis);
    await redis.start();
    this.redisUrl = `redis://127.0.0.1:${redisPort}`;
  }

  private async startEmulator(): Promise<void> {
    const mongoPort = await freePort();
    const emulator = this.kairosProcess("emulator", "emulator", ["--port", String(mongoPort)], {}, async (p, offset) =>
      waitForLog(p, offset, /emulator listening/),
    );
    await emulator.start();
    this.mongoUrl = `mongodb://127.0.0.1:${mongoPort}`;
  }

  private kairosProcess(
    name: string,
    role: Role,
    args: string[],
    env: Record<string, string>,
    ready: (p: ManagedProcess, offset: number) => Promise<unknown>,
  ): ManagedProcess {
    const cwd = join(this.dir, name);
    mkdirp(cwd);
    const p = new ManagedProcess(
      name,
      role,
      process.execPath,
      ["--import", TSX_LOADER, MAIN, role, ...args],
      {
        PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
        HOME: cwd,
        TSX_TSCONFIG_PATH: TSCONFIG,
        ...env,
      },
      cwd,
      join(this.dir, `${name}.log`),
      this.recordEvent,
      ready,
    );
    this.procs.set(name, p);
    return p;
  }

  /** Environment of a Kairos role process. */
  roleEnv(name: string, role: Role): Record<string, string> {
    return {
      MONGO_URL: this.mongoUrl,
      ...(this.topology ? this.topology.env : { REDIS_URL: this.redisUrl }),
      KAIROS_REDIS_PREFIX: this.prefix,
      KAIROS_JWT_SECRET: JWT_SECRET,
      KAIROS_ADMIN_USER: ADMIN.username,
      KAIROS_ADMIN_PASSWORD: ADMIN.password,
      KAIROS_LEASE: this.opts.lease,
      KAIROS_SHARDS: String(this.opts.shards),
      KAIROS_EXECUTOR_SLOTS: String(this.opts.slots),
      KAIROS_NODE_NAME: name,
      KAIROS_LOG_LEVEL: this.opts.logLevel,
      KAIROS_HOST: "127.0.0.1",
      // Jobs run sandboxed; the ledgers' directory is the one path they share with the host.
      KAIROS_SANDBOX_RW_PATHS: this.sharedDir,
      // The harness submits hundreds of jobs as one user in seconds: no API budget applies to it.
      KAIROS_RATE_SUBMISSIONS: "off",
      KAIROS_RATE_REQUESTS: "off",
      ...(role === "api" ? { KAIROS_PORT: "0" } : {}),
      ...this.opts.env,
    };
  }

  /** Adds (and starts) an api, scheduler or executor process. */
  async addProcess(name: string, role: "api" | "scheduler" | "executor", extraEnv: Record<string, string> = {}): Promise<ManagedProcess> {
    const env = { ...this.roleEnv(name, role), ...extraEnv };
    let p: ManagedProcess;
    if (role === "api") {
      p = this.kairosProcess(name, role, [], env, async (proc, offset) => {
        const m = await waitUntil(
          "api to log its URL",
          () => /"url":"(http:\/\/[^"]+)"/.exec(proc.logSince(offset)),
          120_000,
        );
        this.apiUrl = m[1]!;
        await waitUntil("api /readyz", async () => (await fetch(this.apiUrl.replace(/\/graphql$/, "/readyz"))).ok, 10_000);
      });
    } else if (role === "scheduler") {
      p = this.kairosProcess(name, role, [], env, async (proc) => {
        const redis = await this.redis();
        await waitUntil(`${name} to join the scheduler membership`, async () => {
          const members = await redis.zrange(`${this.prefix}:members`, 0, -1);
          return members.some((m) => m.includes(`:${proc.pid}:`));
        }, 120_000);
      });
    } else {
      p = this.kairosProcess(name, role, [], env, async (proc, offset) => {
        await waitForLog(proc, offset, /executor online/);
        const online = proc.logSince(offset).split("\n").find((l) => l.includes("executor online"));
        const nodeId = online && /"nodeId":"([0-9a-f]+)"/.exec(online)?.[1];
        if (nodeId && proc.pid !== null) this.nodePids.set(nodeId, proc.pid);
      });
    }
    await p.start();
    return p;
  }

  get(name: string): ManagedProcess {
    const p = this.procs.get(name);
    if (!p) throw new Error(`no process named ${name}; have ${[...this.procs.keys()].join(", ")}`);
    return p;
  }

  kill9(name: string): Promise<number> {
    return this.get(name).kill9();
  }

  restart(name: string): Promise<void> {
    return this.get(name).restart();
  }

  freeze(name: string): number {
    return this.get(name).freeze();
  }

  thaw(name: string): number {
    return this.get(name).thaw();
  }

  /** A fault of the Redis Cluster or Sentinel group (./redis-topology.ts); resolves once it is healthy again. */
  async redisFault(fault: RedisFault): Promise<number> {
    if (!this.topology) throw new Error(`${fault} needs a Redis Cluster or Sentinel group (--redis cluster|sentinel)`);
    return this.topology.inject(fault, this.recordEvent);
  }

  /** Redis `FLUSHALL`: every key of every deployment is gone at once (recorded as a `flushall` event). */
  async flushRedis(): Promise<number> {
    const redis = await this.redis();
    const p = this.get("redis");
    const at = Date.now();
    await redis.flushall();
    this.recordEvent({ name: "redis", kind: "flushall", at, pid: p.pid ?? -1 });
    return at;
  }

  /**
   * Restarts Redis without persistence: `kill -9` (recorded), then a fresh redis-server on the same
   * port with no data. Clients see their connections drop and reconnect to an empty store.
   */
  async restartRedis(downMs = 0): Promise<number> {
    const p = this.get("redis");
    const at = await p.kill9();
    if (downMs > 0) await sleep(downMs);
    await p.start(30_000);
    return at;
  }

  names(role: Role): string[] {
    return [...this.procs.values()].filter((p) => p.role === role).map((p) => p.name);
  }

  async db(): Promise<Db> {
    if (!this.mongoClient) {
      this.mongoClient = new MongoClient(this.mongoUrl, { serverSelectionTimeoutMS: 10_000, appName: "chaos-harness" });
      await this.mongoClient.connect();
    }
    return this.mongoClient.db("kairos");
  }

  async redis(): Promise<Redis> {
    if (!this.redisClient) {
      // On a Cluster the admin client is a Cluster client (its callers use single-key commands).
      this.redisClient = createRedisClient(this.topology?.target ?? this.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: true }) as Redis;
      this.redisClient.on("error", () => undefined);
      await this.redisClient.connect();
    }
    return this.redisClient;
  }

  async gql<T = Record<string, any>>(query: string, variables: Record<string, unknown> = {}, token = this.token): Promise<GqlResult<T>> {
    const res = await fetch(this.apiUrl, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(30_000),
    });
    return (await res.json()) as GqlResult<T>;
  }

  async gqlOk<T = Record<string, any>>(query: string, variables: Record<string, unknown> = {}, token = this.token): Promise<T> {
    const r = await this.gql<T>(query, variables, token);
    if (r.errors?.length) throw new Error(`GraphQL errors: ${JSON.stringify(r.errors)}`);
    return r.data!;
  }

  async login(username: string, password: string): Promise<string> {
    const d = await this.gqlOk<{ login: { token: string } }>(
      `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`,
      { u: username, p: password },
      "",
    );
    return d.login.token;
  }

  /** Creates a job over GraphQL (CreateJobInput) and returns its id. */
  async createJob(input: Record<string, unknown>, token = this.token): Promise<string> {
    const d = await this.gqlOk<{ createJob: { id: string } }>(
      `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
      { input },
      token,
    );
    return d.createJob.id;
  }

  /** Creates a DAG over GraphQL (CreateDagInput) and returns its id. */
  async createDag(input: Record<string, unknown>, token = this.token): Promise<string> {
    const d = await this.gqlOk<{ createDag: { id: string } }>(`mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`, { input }, token);
    return d.createDag.id;
  }

  /** Runs of a job over GraphQL (newest first, all pages). */
  async jobRuns(jobId: string): Promise<Array<Record<string, any>>> {
    const out: Array<Record<string, any>> = [];
    let after: string | null = null;
    for (;;) {
      const d: any = await this.gqlOk(
        `query($j: ID!, $a: String) { runs(jobId: $j, first: 100, after: $a) {
          edges { node { id status attempt fencingToken scheduledFor startedAt finishedAt nodeId error } }
          pageInfo { hasNextPage endCursor } } }`,
        { j: jobId, a: after },
      );
      out.push(...d.runs.edges.map((e: any) => e.node));
      if (!d.runs.pageInfo.hasNextPage) return out;
      after = d.runs.pageInfo.endCursor;
    }
  }

  /** Ends every process: Kairos roles first (SIGTERM, SIGKILL after `graceMs`), then the emulator and Redis. */
  async stop(graceMs = 10_000): Promise<void> {
    await this.mongoClient?.close().catch(() => undefined);
    this.mongoClient = null;
    this.redisClient?.disconnect();
    this.redisClient = null;
    const kairos = [...this.procs.values()].filter((p) => p.role === "api" || p.role === "scheduler" || p.role === "executor");
    await Promise.all(kairos.map((p) => p.terminate(graceMs)));
    await this.procs.get("emulator")?.terminate(5_000);
    await this.procs.get("redis")?.terminate(5_000);
    await this.topology?.stop();
    if (!this.opts.keepDir) rmSync(this.dir, { recursive: true, force: true });
  }
}

function mkdirp(dir: string): void {
  mkdirSync(dir, { recursive: true });
}
