/** The services every role shares, and the API's, built on the stores. */
import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createAuth, createRateLimits, TokenService, userBudgetKey } from "../auth/index.js";
import type { KairosConfig } from "../config/index.js";
import { DagEngine } from "../dag/index.js";
import { ClusterStats, ClusterStatsFeed, ForecastService } from "../core/index.js";
import { ArtifactService, AuditService, HttpSigning, type ArtifactLookup, JobService, logBlobs, LookupService, NodeReads, PoolCoverage, resolveArtifact, RunLogs, RunReads, RunService, UserService, WaitService } from "../core/index.js";
import type { Services } from "../resolvers/index.js";
import { openRedis, quitRedis, type Clock } from "../shared-state/index.js";
import type { Logger } from "../support/index.js";
import { buildAlertRules, buildAlertSilences } from "./alerts.js";
import { bridge, type Stores } from "./stores.js";
import type { Stops } from "./stops.js";

/** The API's services plus the store and the shared state they are built on (for tests and metrics; resolvers never see these two). */
export type AppServices = Services & Pick<Stores, "mongo" | "state" | "blobs">;

/** The services the resolvers get: no store and no shared state among them. */
export async function buildServices(config: KairosConfig, stores: Stores, opts: { log: Logger; clock: Clock; stageAheadMs: number }, stops: Stops): Promise<Services> {
  const { mongo, state } = stores;
  const { log, clock } = opts;
  const dev = config.role === "dev";
  const jwtSecret = config.jwtSecret ?? (dev ? await devJwtSecret(config.dataDir) : randomBytes(32).toString("hex"));
  const tokens = new TokenService(jwtSecret, config.jwtTtlMs);
  // Rate-limit counters are shared through Redis when the deployment has it, so every API
  // instance sees the same budgets, and the DAG engine (on executors and schedulers) charges a
  // mapped task's instances to the budget the API reads; their own connection keeps them off the
  // scheduler's pipeline.
  const limitsRedis = config.redis ? await openRedis(config.redis, "kairos-limits", bridge(log, "redis")) : null;
  if (limitsRedis) stops.push(() => quitRedis(limitsRedis));
  const limits = createRateLimits(config.api, { redis: limitsRedis, prefix: config.redisPrefix });
  const runs = new RunService({
    mongo,
    state,
    clock,
    log: log.child({ component: "runs" }),
    maxWaitingRuns: config.maxWaitingRuns,
  });
  const pools = new PoolCoverage({ mongo, clock });
  const artifactLookup: ArtifactLookup | null = stores.blobs ? { forJob: (caller, id) => resolveArtifact(mongo, caller, id) } : null;
  // Told of each job stored with a recurring schedule: SCHEDULE_SILENT rules on all of its owner's jobs watch it.
  const silences = buildAlertSilences(config, { mongo, state, clock, log });
  const jobs = new JobService({ mongo, state, runs, clock, log: log.child({ component: "jobs" }), defaultCatchupWindowMs: config.catchupWindowMs, stageAheadMs: opts.stageAheadMs, pools, artifacts: artifactLookup, recurring: silences });
  const dagEngine = new DagEngine({
    mongo,
    state,
    runs,
    jobs,
    clock,
    log: log.child({ component: "dags" }),
    defaultCatchupWindowMs: config.catchupWindowMs,
    artifacts: artifactLookup,
    chargeRuns: (ownerId, count) => limits.submissions.charge(userBudgetKey(ownerId), count),
  });
  // core reaches the DAG engine through one port (DagPort: a task run's end, a DAG timer's fire, its staged DAG runs).
  runs.connectDags(dagEngine);
  const auth = createAuth({ mongo, tokens, clock, log });
  const artifacts = new ArtifactService({
    mongo,
    blobs: stores.blobs,
    clock,
    log: log.child({ component: "artifacts" }),
    maxBytes: config.artifacts.maxBytes,
    uploadTtlMs: config.artifacts.uploadTtlMs,
  });
  const users = new UserService({ mongo, tokens, clock, log, state, accounts: auth.accounts, apiKeys: auth.apiKeys, jobs, artifacts, dags: dagEngine.service });
  // clusterStats and its subscription feed (one computation a pass for all subscribers), forecast (issue #31).
  const clusterStats = new ClusterStats({ mongo, state, clock, shards: config.shards, pools: config.pools });
  const statsFeed = new ClusterStatsFeed({ stats: clusterStats, log: log.child({ component: "cluster-stats" }) });
  stops.push(() => statsFeed.stop());
  return {
    users, jobs, runs, log, pools, limits, ...auth,
    clusterStats, statsFeed, forecast: new ForecastService({ mongo, clock }),
    runReads: new RunReads({ mongo, clock }),
    nodes: new NodeReads({ mongo }),
    lookups: new LookupService({ mongo, clock, users }),
    waits: new WaitService({ mongo, clock, pools, waiting: runs.waiting, budget: (ownerId, now) => limits.submissions.spentUntil(userBudgetKey(ownerId), now) }),
    events: runs.events,
    dags: dagEngine.service,
    dagRuns: dagEngine.dagRuns,
    dagEvents: dagEngine.events,
    dagEngine,
    httpSigning: new HttpSigning({ mongo, clock }),
    artifacts,
    ...buildAlertRules(config, { mongo, state, clock, log }, silences, stops),
    // The chain's key comes from KAIROS_AUDIT_KEY, else from the JWT secret (dev's is kept in its data dir).
    audit: new AuditService({ mongo, clock, log: log.child({ component: "audit" }), settings: config.audit, secret: jwtSecret }),
    logs: new RunLogs({ mongo, bus: state.bus, blobs: stores.blobs ? logBlobs(stores.blobs) : null, settings: config.logs, clock }),
  };
}

/** dev keeps its signing secret in its data directory, so tokens survive a restart. */
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
