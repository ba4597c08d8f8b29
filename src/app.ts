/**
 * The composition root: builds the stores, shared state and services a role needs, starts its
 * components, and stops them in reverse order. `dev` runs every role in one process on embedded
 * defaults (the MongoDB emulator and the in-memory adapters), unless MONGO_URL / REDIS_URL say
 * otherwise.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { startApiServer, type ApiServer } from "./api/index.js";
import { startOpsServer } from "./api/index.js";
import { createRateLimits } from "./auth/index.js";
import { SampledGauge, registry } from "./support/index.js";
import { OPEN_STATUSES } from "./domain/index.js";
import { TokenService } from "./auth/index.js";
import { createAuth } from "./auth/index.js";
import type { KairosConfig } from "./config/index.js";
import { JobService } from "./core/index.js";
import { LookupService } from "./core/index.js";
import { NodeReads } from "./core/index.js";
import { RunReads } from "./core/index.js";
import { PoolCoverage } from "./core/index.js";
import { RunService } from "./core/index.js";
import { UserService } from "./core/index.js";
import { loadEmulator } from "./dev-emulator.js";
import { Executor, type ExecutorOptions } from "./executor/index.js";
import type { Logger } from "./support/index.js";

type LogLevelName = "debug" | "info" | "warn" | "error";
const bridge = (log: Logger, component: string) => (level: LogLevelName, msg: string, fields?: Record<string, unknown>) =>
  log[level]({ component, ...fields }, msg);
import { buildKairosSchema, type Services } from "./resolvers/index.js";
import { Scheduler, type SchedulerOptions } from "./scheduler/index.js";
import { createMemorySharedState } from "./shared-state/index.js";
import type { Clock, SharedState } from "./shared-state/index.js";
import { createRedisSharedState, openRedis, quitRedis } from "./shared-state/index.js";
import { connectMongo, newId, type Mongo } from "./store/index.js";

export interface KairosApp {
  config: KairosConfig;
  services: AppServices;
  api: ApiServer | null;
  scheduler: Scheduler | null;
  executor: Executor | null;
  /** Set when the bootstrap admin was created with a generated password (print it once). */
  generatedAdminPassword: string | null;
  mongoUrl: string;
  stop(): Promise<void>;
}

/** The API's services plus the store and the shared state they are built on (for tests and metrics; resolvers never see these two). */
export type AppServices = Services & { mongo: Mongo; state: SharedState };

export interface StartOptions {
  log: Logger;
  clock?: Clock;
  /** Overrides for tests and tuning (timing knobs). */
  scheduler?: Partial<SchedulerOptions>;
  executor?: Partial<ExecutorOptions>;
}

async function devJwtSecret(dataDir: string): Promise<string> {
  const file = join(dataDir, "jwt-secret");
  try {
    const s = (await readFile(file, "utf8")).trim();
    if (s.length >= 32) return s;
  } catch {
    // first start
  }
  const secret = randomBytes(32).toString("hex");
  await writeFile(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

/** Gauges read at scrape time from the shared state and the store. Returns their unregistration. */
function registerSampledMetrics(s: AppServices, pools: readonly string[]): () => Promise<void> {
  const gauges = [
    new SampledGauge("kairos_queue_depth", "Runs waiting in each pool's ready queue.", ["pool"], async () => {
      const known = new Set<string>([...pools, ...(await s.mongo.c.nodes.distinct("pools", { status: { $in: ["ONLINE", "DRAINING"] } }))]);
      return Promise.all([...known].map(async (pool) => [{ pool }, await s.state.ready.size(pool)] as [Record<string, string>, number]));
    }),
    new SampledGauge("kairos_nodes", "Executor nodes by status.", ["status"], async () =>
      Promise.all((["ONLINE", "DRAINING", "OFFLINE", "DEAD"] as const).map(async (status) => [{ status }, await s.mongo.c.nodes.countDocuments({ status })] as [Record<string, string>, number])),
    ),
    new SampledGauge("kairos_open_runs", "Runs not yet final, by status.", ["status"], async () =>
      Promise.all(OPEN_STATUSES.map(async (status) => [{ status }, await s.mongo.c.runs.countDocuments({ status })] as [Record<string, string>, number])),
    ),
    new SampledGauge("kairos_unserved_queued_runs", "QUEUED runs in pools that no online executor serves (they wait until one does).", ["pool"], async () =>
      (await s.pools.unservedQueued()).map(([pool, n]) => [{ pool }, n] as [Record<string, string>, number]),
    ),
  ];
  for (const g of gauges) {
    registry.unregister(g.name);
    registry.register(g);
  }
  return async () => {
    for (const g of gauges) registry.unregister(g.name);
  };
}

export async function startKairos(config: KairosConfig, opts: StartOptions): Promise<KairosApp> {
  const { log } = opts;
  const clock = opts.clock ?? Date.now;
  const dev = config.role === "dev";
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) {
      await stop().catch((e) => log.error({ err: e }, "error during shutdown"));
    }
  };

  try {
    if (dev) await mkdir(config.dataDir, { recursive: true });

    let mongoUrl: string;
    if (config.mongoUrl) {
      mongoUrl = config.mongoUrl;
    } else {
      // Only here (dev, no MONGO_URL) is the emulator package loaded; production roles never are.
      const { startEmulator } = await loadEmulator();
      const emulator = await startEmulator({
        port: 0,
        dataDir: join(config.dataDir, "mongo"),
        log: bridge(log, "emulator"),
      });
      stops.push(() => emulator.stop());
      mongoUrl = emulator.uri;
      log.info({ uri: mongoUrl, dataDir: join(config.dataDir, "mongo") }, "embedded MongoDB emulator started");
    }
    const mongo: Mongo = await connectMongo(mongoUrl, config.mongoDb, { appName: `kairos-${config.role}` });
    stops.push(() => mongo.close());

    const state: SharedState = config.redisUrl
      ? await createRedisSharedState({
          url: config.redisUrl,
          prefix: config.redisPrefix,
          shardCount: config.shards,
          log: bridge(log, "redis"),
        })
      : createMemorySharedState({ shardCount: config.shards });
    stops.push(() => state.close());

    const jwtSecret = config.jwtSecret ?? (dev ? await devJwtSecret(config.dataDir) : randomBytes(32).toString("hex"));
    const tokens = new TokenService(jwtSecret, config.jwtTtlMs);
    const runs = new RunService({ mongo, state, clock, log: log.child({ component: "runs" }) });
    const pools = new PoolCoverage({ mongo, clock });
    const jobs = new JobService({ mongo, state, runs, clock, log: log.child({ component: "jobs" }),
      defaultCatchupWindowMs: config.catchupWindowMs,
      stageAheadMs: opts.scheduler?.stageAheadMs ?? config.stageAheadMs,
      pools,
    });
    const auth = createAuth({ mongo, tokens, clock, log });
    const users = new UserService({ mongo, tokens, clock, log, state, accounts: auth.accounts, apiKeys: auth.apiKeys, jobs });
    // Rate-limit counters are shared through Redis when the deployment has it, so every API
    // instance sees the same budgets; their own connection keeps them off the scheduler's pipeline.
    const serving = dev || config.role === "api";
    const limitsRedis = serving && config.redisUrl ? await openRedis(config.redisUrl, "kairos-limits", bridge(log, "redis")) : null;
    if (limitsRedis) stops.push(() => quitRedis(limitsRedis));
    const limits = createRateLimits(config.api, { redis: limitsRedis, prefix: config.redisPrefix });
    const services: Services = {
      users, jobs, runs, tokens, clock, log, pools, limits, ...auth,
      runReads: new RunReads({ mongo }),
      nodes: new NodeReads({ mongo }),
      lookups: new LookupService({ mongo, clock, users }),
      events: runs.events,
    };

    let generatedAdminPassword: string | null = null;
    if (dev || config.role === "api") {
      const admin = await users.ensureAdmin(config.adminUser, config.adminPassword);
      generatedAdminPassword = admin.generatedPassword;
      if (admin.created) log.info({ username: config.adminUser, generated: admin.generatedPassword !== null }, "bootstrap admin created");
      if (admin.updated) log.info({ username: config.adminUser }, "bootstrap admin password set from KAIROS_ADMIN_PASSWORD");
    }

    const wired: AppServices = { ...services, mongo, state };
    stops.push(registerSampledMetrics(wired, config.pools));

    let scheduler: Scheduler | null = null;
    if (dev || config.role === "scheduler") {
      scheduler = new Scheduler(
        { mongo, state, runs, clock, log: log.child({ component: "scheduler" }) },
        {
          memberId: `${hostname()}:${process.pid}:${newId().slice(-6)}`,
          shardLeaseMs: config.shardLeaseMs,
          stageAheadMs: config.stageAheadMs,
          claimGraceMs: Math.max(config.leaseMs, opts.executor?.leaseMs ?? 0),
          ...opts.scheduler,
        },
      );
      await scheduler.start();
      const s = scheduler;
      stops.push(() => s.stop());
    }

    let executor: Executor | null = null;
    if (dev || config.role === "executor") {
      executor = new Executor(
        { mongo, state, runs, clock, log: log.child({ component: "executor" }) },
        {
          nodeName: config.nodeName,
          pools: config.pools,
          slots: config.executorSlots,
          leaseMs: config.leaseMs,
          workRoot: join(dev ? config.dataDir : join(process.cwd(), ".kairos"), "work"),
          sandbox: config.sandbox,
          sandboxUidBase: config.sandboxUidBase,
          sandboxRoPaths: config.sandboxRoPaths,
          sandboxRwPaths: config.sandboxRwPaths,
          runDefaults: config.runDefaults,
          sandboxEgress: config.egress,
          ...(config.executorCapacity ? { capacity: config.executorCapacity } : {}),
          ...(config.runMax ? { runMax: config.runMax } : {}),
          ...opts.executor,
        },
      );
      await executor.start();
      const e = executor;
      stops.push(() => e.stop());
    }

    const ready = async () => (await mongo.db.command({ ping: 1 })).ok === 1;
    let api: ApiServer | null = null;
    if (dev || config.role === "api") {
      const schema = await buildKairosSchema();
      api = await startApiServer(services, schema, {
        port: config.port,
        host: config.host,
        ready,
        guard: config.api,
      });
      const a = api;
      // The API stops first (stops run in reverse), so no request sees a half-stopped backend.
      stops.push(() => a.stop());
      log.info({ url: api.url, ws: api.wsUrl }, "GraphQL API listening");
    }

    if (!api && config.metricsPort !== null) {
      const ops = await startOpsServer(config.metricsPort, config.host, log, ready);
      stops.push(() => ops.stop());
      log.info({ port: ops.port }, "health and metrics listening");
    }

    return { config, services: wired, api, scheduler, executor, generatedAdminPassword, mongoUrl, stop: stopAll };
  } catch (e) {
    await stopAll();
    throw e;
  }
}
