/** Starting each role's component on the shared services: the scheduler, the executor, the API (or, without it, the ops server). */
import { hostname } from "node:os";
import { join } from "node:path";
import { startApiServer, startOpsServer, type ApiServer } from "../api/index.js";
import { badPortReason, type KairosConfig } from "../config/index.js";
import type { SweeperOptions } from "../dag/index.js";
import { ArtifactSweeper, LogArchiver, LogWriter, logBlobs } from "../core/index.js";
import { ArtifactCache, Executor, type ExecutorOptions } from "../executor/index.js";
import { buildKairosSchema, type Services } from "../resolvers/index.js";
import { Scheduler, type SchedulerOptions } from "../scheduler/index.js";
import type { Clock } from "../shared-state/index.js";
import { newId } from "../store/index.js";
import { startAlertEngine } from "./alerts.js";
import { API_PORT, METRICS_PORT, nameSetting } from "./ports.js";
import type { Stores } from "./stores.js";
import type { Stops } from "./stops.js";

export interface RoleOverrides {
  /** Overrides for tests and tuning (timing knobs). */
  scheduler?: Partial<SchedulerOptions>;
  executor?: Partial<ExecutorOptions>;
  /** The DAG sweeper's timing (scheduler role). */
  dagSweep?: Partial<SweeperOptions>;
}

type RoleDeps = Stores & Pick<Services, "runs" | "log" | "dagEngine"> & { clock: Clock };

export async function startScheduler(config: KairosConfig, deps: RoleDeps, overrides: RoleOverrides, stops: Stops): Promise<Scheduler> {
  const { mongo, state, runs, clock, log } = deps;
  const scheduler = new Scheduler(
    { mongo, state, runs, clock, log: log.child({ component: "scheduler" }) },
    {
      memberId: `${hostname()}:${process.pid}:${newId().slice(-6)}`,
      shardLeaseMs: config.shardLeaseMs,
      stageAheadMs: config.stageAheadMs,
      claimGraceMs: Math.max(config.leaseMs, overrides.executor?.leaseMs ?? 0),
      alertTimerGraceMs: config.alerts.timerGraceMs,
      ...overrides.scheduler,
    },
  );
  await scheduler.start();
  stops.push(() => scheduler.stop());
  // DAG runs whose advance a crash interrupted are advanced again (src/dag/engine/sweeper.ts).
  const sweeper = deps.dagEngine.sweeper(overrides.dagSweep);
  sweeper.start();
  stops.push(() => sweeper.stop());
  // Definitions of DAG versions no DAG run reads any more are deleted (src/dag/engine/retention.ts).
  const retention = deps.dagEngine.definitionRetention();
  retention.start();
  stops.push(() => retention.stop());
  // Alerts are found and sent by the owner of shard 0 (src/core/alerts/engine.ts, docs/alerts.md).
  startAlertEngine(config, { mongo, state, clock, log }, () => scheduler.owned.has(0), stops);
  return scheduler;
}

export async function startExecutor(config: KairosConfig, deps: RoleDeps, overrides: RoleOverrides, stops: Stops): Promise<Executor> {
  const { mongo, state, runs, clock, log, blobs } = deps;
  const artifacts = blobs
    ? new ArtifactCache({
        dir: config.artifacts.cacheDir,
        blobs,
        maxArtifactBytes: config.artifacts.maxBytes,
        maxBytes: config.artifacts.cacheMaxBytes,
        log: log.child({ component: "artifact-cache" }),
      })
    : null;
  // Every executor archives ended logs (its own and any a dead node left) when there is a blob store.
  const archiver = blobs ? new LogArchiver({ mongo, blobs: logBlobs(blobs), clock, log: log.child({ component: "log-archiver" }), settings: config.logs }) : null;
  const logs = { writer: new LogWriter({ mongo, bus: state.bus, clock }), settings: config.logs, onEnded: () => archiver?.nudge() };
  const executor = new Executor(
    { mongo, state, runs, clock, log: log.child({ component: "executor" }), artifacts, logs },
    {
      nodeName: config.nodeName,
      pools: config.pools,
      slots: config.executorSlots,
      leaseMs: config.leaseMs,
      workRoot: join(config.role === "dev" ? config.dataDir : join(process.cwd(), ".kairos"), "work"),
      sandbox: config.sandbox,
      sandboxLauncher: config.sandboxLauncher,
      sandboxUidBase: config.sandboxUidBase,
      sandboxRoPaths: config.sandboxRoPaths,
      sandboxRwPaths: config.sandboxRwPaths,
      runDefaults: config.runDefaults,
      sandboxEgress: config.egress,
      interpreters: config.jobKinds.interpreters,
      httpTargets: { allowedCidrs: config.jobKinds.httpAllowedCidrs, deniedCidrs: config.jobKinds.httpDeniedCidrs },
      ...(config.executorCapacity ? { capacity: config.executorCapacity } : {}),
      ...(config.runMax ? { runMax: config.runMax } : {}),
      ...overrides.executor,
    },
  );
  await executor.start();
  stops.push(() => executor.stop());
  if (archiver) {
    archiver.start();
    stops.push(() => archiver.stop());
  }
  return executor;
}

/** The GraphQL API; it stops first (stops run in reverse), so no request sees a half-stopped backend. */
export async function startApi(config: KairosConfig, services: Services, ready: () => Promise<boolean>, stops: Stops): Promise<ApiServer> {
  const schema = await buildKairosSchema();
  const api = await startApiServer(services, schema, { port: config.port, host: config.host, ready, guard: config.api }).catch((e: unknown) => {
    throw nameSetting(e, API_PORT);
  });
  stops.push(() => api.stop());
  services.log.info({ url: api.url, ws: api.wsUrl }, "GraphQL API listening");
  const bad = badPortReason(config.port);
  if (bad) services.log.warn({ port: config.port }, `KAIROS_PORT: ${bad}: browsers and kairos reach this API only through a proxy on another port`);
  return api;
}

/** Health and metrics for a role that serves no API. */
export async function startOps(config: KairosConfig, port: number, deps: Pick<Services, "log">, ready: () => Promise<boolean>, stops: Stops): Promise<void> {
  const ops = await startOpsServer(port, config.host, deps.log, ready).catch((e: unknown) => {
    throw nameSetting(e, METRICS_PORT);
  });
  stops.push(() => ops.stop());
  deps.log.info({ port: ops.port }, "health and metrics listening");
}

/** API role: deletes abandoned artifact uploads and what no document claims (core/artifacts/sweep.ts). */
export function startArtifactSweep(config: KairosConfig, deps: RoleDeps, stops: Stops): ArtifactSweeper | null {
  if (!deps.blobs) return null;
  const sweeper = new ArtifactSweeper({
    mongo: deps.mongo,
    blobs: deps.blobs,
    clock: deps.clock,
    log: deps.log.child({ component: "artifact-sweep" }),
    uploadTtlMs: config.artifacts.uploadTtlMs,
  });
  sweeper.start();
  stops.push(() => sweeper.stop());
  return sweeper;
}
