/**
 * The composition root: builds the stores, shared state and services a role needs, starts its
 * components, and stops them in reverse order. `dev` runs every role in one process on embedded
 * defaults (the MongoDB emulator and the in-memory adapters), unless MONGO_URL / REDIS_URL say
 * otherwise.
 */
import { constants } from "node:fs";
import { access, mkdir } from "node:fs/promises";
import type { ApiServer } from "../api/index.js";
import type { KairosConfig } from "../config/index.js";
import { ConfigError, fileProblem } from "../domain/index.js";
import type { Executor } from "../executor/index.js";
import type { Scheduler } from "../scheduler/index.js";
import { pingMongo } from "../store/index.js";
import type { Clock } from "../shared-state/index.js";
import { startTracing, type Logger } from "../support/index.js";
import { registerSampledMetrics } from "./metrics.js";
import { checkRolePorts } from "./ports.js";
import { startApi, startArtifactSweep, startExecutor, startOps, startScheduler, type RoleOverrides } from "./roles.js";
import { buildServices, type AppServices } from "./services.js";
import { Stops } from "./stops.js";
import { openStores } from "./stores.js";

export type { AppServices } from "./services.js";

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

export interface StartOptions extends RoleOverrides {
  log: Logger;
  clock?: Clock;
}

export async function startKairos(config: KairosConfig, opts: StartOptions): Promise<KairosApp> {
  const { log } = opts;
  const clock = opts.clock ?? Date.now;
  const has = (role: KairosConfig["role"]) => config.role === "dev" || config.role === role;
  const stops = new Stops(log);
  await checkRolePorts(config);
  try {
    // First on, last off: every component's spans are made and flushed while it is on.
    if (config.tracing) stops.push(startTracing(config.tracing, config.role, log));
    if (config.role === "dev") await devDataDir(config.dataDir);
    const stores = await openStores(config, log, stops);
    const services = await buildServices(config, stores, { log, clock, stageAheadMs: opts.scheduler?.stageAheadMs ?? config.stageAheadMs }, stops);
    const generatedAdminPassword = has("api") ? await ensureAdmin(config, services) : null;
    stops.push(registerSampledMetrics({ ...stores, pools: services.pools }, config.pools));

    const deps = { ...stores, runs: services.runs, dagEngine: services.dagEngine, clock, log };
    stops.push(() => services.dagEngine.advancer.idle());
    const scheduler = has("scheduler") ? await startScheduler(config, deps, opts, stops) : null;
    const executor = has("executor") ? await startExecutor(config, deps, opts, stops) : null;
    const ready = () => pingMongo(stores.mongo);
    if (has("api")) startArtifactSweep(config, deps, stops);
    if (has("api")) {
      // Entries past KAIROS_AUDIT_RETENTION are removed by every API instance (idempotent).
      services.audit.startRetention();
      stops.push(() => services.audit.stopRetention());
    }
    const api = has("api") ? await startApi(config, services, ready, stops) : null;
    if (!api && config.metricsPort !== null) await startOps(config, config.metricsPort, services, ready, stops);

    const appServices: AppServices = { ...services, mongo: stores.mongo, state: stores.state, blobs: stores.blobs };
    return { config, services: appServices, api, scheduler, executor, generatedAdminPassword, mongoUrl: stores.mongoUrl, stop: () => stops.all() };
  } catch (e) {
    await stops.all();
    throw e;
  }
}

/** The bootstrap admin (KAIROS_ADMIN_USER): created on first start; its generated password, if any, is returned to print once. */
async function ensureAdmin(config: KairosConfig, services: Pick<AppServices, "users" | "log">): Promise<string | null> {
  const admin = await services.users.ensureAdmin(config.adminUser, config.adminPassword);
  if (admin.created) services.log.info({ username: config.adminUser, generated: admin.generatedPassword !== null }, "bootstrap admin created");
  if (admin.updated) services.log.info({ username: config.adminUser }, "bootstrap admin password set from KAIROS_ADMIN_PASSWORD");
  return admin.generatedPassword;
}

/**
 * kairos dev's data directory, made if missing and writable, or refused as a setting (one line,
 * exit 2): a --data-dir naming a file said `Error: EEXIST: file already exists, mkdir …` and a stack.
 */
async function devDataDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK);
  } catch (e) {
    const problem = (e as NodeJS.ErrnoException).code === "EEXIST" ? "a file is there, not a folder" : fileProblem(e);
    throw new ConfigError(`KAIROS_DATA_DIR (--data-dir) ${dir}: ${problem}; give a folder kairos dev may write (it is made if missing)`);
  }
}
