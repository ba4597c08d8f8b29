import { budgetKey, type RateLimits } from "../auth/index.js";
import type { AuthParts, Caller } from "../auth/index.js";
import type { DagEngine, DagEvents, DagRunService, DagService } from "../dag/index.js";
import type { ArtifactService, AuditService, RunEvents, RunLogs } from "../core/index.js";
import type { JobService } from "../core/index.js";
import type { LookupService, Lookups, WaitService } from "../core/index.js";
import type { NodeReads } from "../core/index.js";
import type { HttpSigning, PoolCoverage } from "../core/index.js";
import type { RunReads } from "../core/index.js";
import type { RunService } from "../core/index.js";
import type { UserService } from "../core/index.js";
import type { ClusterStats, ClusterStatsFeed, ForecastService } from "../core/index.js";
import type { AlertBus, AlertRules } from "../core/index.js";
import { assertAdmin } from "../auth/index.js";
import { ForbiddenError, UnauthenticatedError } from "../domain/index.js";
import type { Logger } from "../support/index.js";

/**
 * Process-wide services the resolvers call; built once by the API role. No store and no shared
 * state here: every read and change goes through a service, which decides what the caller may see.
 */
export interface Services extends AuthParts {
  users: UserService;
  jobs: JobService;
  runs: RunService;
  /** A job's runs and the dead letters, as users read them. */
  runReads: RunReads;
  /** Executor nodes and the resources held on them. */
  nodes: NodeReads;
  /** Each request's batched reads by id. */
  lookups: LookupService;
  /** Why runs wait and jobs make no runs (Run.waiting, Job.problems), read in batches per request. */
  waits: WaitService;
  /** Run logs: reads, links and the live stream. */
  logs: RunLogs;
  /** Run status events, for subscriptions. */
  events: RunEvents;
  pools: PoolCoverage;
  /** HTTP jobs' signing secrets (rotateHttpSigningSecret). */
  httpSigning: HttpSigning;
  log: Logger;
  /** Request, submission and login limits (src/auth/rate-limit.ts). */
  limits: RateLimits;
  /** DAGs (src/dag): create, change, delete, pause, resume, read. */
  dags: DagService;
  /** DAG runs (src/dag): trigger, backfill, cancel, retry, read. */
  dagRuns: DagRunService;
  /** DAG run events, for dagRunUpdated. */
  dagEvents: DagEvents;
  /** The DAG engine (the scheduler role's sweeper); resolvers use `dags` and `dagRuns`. */
  dagEngine: DagEngine;
  /** Uploaded scripts and binaries (issue #16). */
  artifacts: ArtifactService;
  /** clusterStats, its subscription's shared feed, and forecast (issue #31). */
  clusterStats: ClusterStats;
  statsFeed: ClusterStatsFeed;
  forecast: ForecastService;
  /** The audit trail of mutations (issue #31): recorded by resolvers/audit-trail.ts, read by auditLog. */
  audit: AuditService;
  /** Alert rules, their deliveries and tests (issue #31, docs/alerts.md). */
  alerts: AlertRules;
  /** Alert deliveries as they are made, for alertFired. */
  alertBus: AlertBus;
}

export interface Context {
  principal: Caller | null;
  /** Why the credentials were refused, when they were (reported on first use, not at connect). */
  authError: string | null;
  services: Services;
  /** This request's (or subscription event's) reads by id: batched, cached for it alone. */
  lookups: Lookups;
  log: Logger;
  /** The caller's address, for per-address login protection (src/api/client-address.ts). */
  clientAddress: string;
}

export function createContext(services: Services, principal: Caller | null, authError: string | null, clientAddress = "unknown"): Context {
  return { principal, authError, services, lookups: services.lookups.forRequest(), log: services.log, clientAddress };
}

export function requireUser(ctx: Context): Caller {
  if (!ctx.principal) throw new UnauthenticatedError(ctx.authError ?? "log in first: send `Authorization: Bearer <token or API key>` (mutation login)");
  return ctx.principal;
}

export function requireAdmin(ctx: Context, targetId: string | null = null): Caller {
  const p = requireUser(ctx);
  assertAdmin(p, targetId);
  return p;
}

/**
 * A caller signed in with a password (a login token), not an API key: for managing credentials,
 * so a leaked key cannot mint more keys or outlive its revocation.
 */
export function requireSession(ctx: Context): Caller {
  const p = requireUser(ctx);
  if (p.credential.kind !== "token") throw new ForbiddenError("API keys cannot manage credentials; log in with a password for this");
  return p;
}

/** requireUser, then one call from the user's submission budget (createJob, triggerJob, backfillJob). */
export async function requireSubmitter(ctx: Context): Promise<Caller> {
  const p = requireUser(ctx);
  const { key, who } = budgetKey(p, ctx.clientAddress);
  await ctx.services.limits.submissions.take(key, who);
  return p;
}

/**
 * Takes `count` more submissions from the caller's budget (after requireSubmitter's one): a
 * submission that makes that many runs counts as that many (at most a whole window's budget).
 */
export async function takeSubmissions(ctx: Context, p: Caller, count: number, why: string): Promise<void> {
  if (count <= 0) return;
  const { key, who } = budgetKey(p, ctx.clientAddress);
  await ctx.services.limits.submissions.take(key, who, count, why);
}
