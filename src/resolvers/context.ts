import DataLoader from "dataloader";
import { allocatedOn } from "../core/allocations.js";
import { budgetKey, type RateLimits } from "../api/rate-limit.js";
import type { AuthParts, Caller } from "../auth/index.js";
import type { TokenService } from "../auth/tokens.js";
import type { JobService } from "../core/jobs.js";
import type { PoolCoverage } from "../core/pools.js";
import type { RunService } from "../core/runs.js";
import type { UserService } from "../core/users.js";
import { assertAdmin } from "../auth/access.js";
import { ForbiddenError, UnauthenticatedError } from "../domain/errors.js";
import type { Logger } from "../log.js";
import type { Clock, SharedState } from "../scheduler/ports.js";
import type { Mongo } from "../store/mongo.js";
import type { JobDoc, RunDoc, UserDoc } from "../domain/documents.js";

/** Process-wide services the resolvers call; built once by the API role. */
export interface Services extends AuthParts {
  mongo: Mongo;
  state: SharedState;
  users: UserService;
  jobs: JobService;
  runs: RunService;
  tokens: TokenService;
  pools: PoolCoverage;
  clock: Clock;
  log: Logger;
  /** Request, submission and login limits (src/api/rate-limit.ts). */
  limits: RateLimits;
}

export interface Loaders {
  user: DataLoader<string, UserDoc | null>;
  job: DataLoader<string, JobDoc | null>;
  run: DataLoader<string, RunDoc | null>;
  /**
   * A job's runs staged ahead of their time (QUEUED, `notBefore` still to come), earliest first:
   * fires that have their run already but have not happened (see KAIROS_STAGE_AHEAD).
   */
  stagedFires: DataLoader<string, Array<Pick<RunDoc, "scheduledFor" | "notBefore">>>;
  /** CPU and memory reserved on a node by its running attempts (core/allocations.ts). */
  allocated: DataLoader<string, { cpu: number; memoryMb: number } | null>;
}

export interface Context {
  principal: Caller | null;
  /** Why the credentials were refused, when they were (reported on first use, not at connect). */
  authError: string | null;
  services: Services;
  loaders: Loaders;
  log: Logger;
  /** The caller's address, for per-address login protection (src/api/client-address.ts). */
  clientAddress: string;
}

function byId<T extends { _id: string }>(load: (ids: string[]) => Promise<T[]>): DataLoader<string, T | null> {
  return new DataLoader(async (ids) => {
    const docs = await load([...ids]);
    const map = new Map(docs.map((d) => [d._id, d]));
    return ids.map((id) => map.get(id) ?? null);
  });
}

/** One set of loaders per request (or per subscription event): batching without cross-user caching. */
export function createLoaders(s: Services): Loaders {
  const { c } = s.mongo;
  return {
    user: byId((ids) => c.users.find({ _id: { $in: ids } }).toArray()),
    job: byId((ids) => c.jobs.find({ _id: { $in: ids } }).toArray()),
    run: byId((ids) => c.runs.find({ _id: { $in: ids } }).toArray()),
    stagedFires: new DataLoader(async (jobIds) => {
      const staged = await c.runs
        .find(
          { jobId: { $in: [...jobIds] }, status: "QUEUED", notBefore: { $gt: new Date(s.clock()) } },
          { projection: { jobId: 1, scheduledFor: 1, notBefore: 1 }, sort: { notBefore: 1 } },
        )
        .toArray();
      return jobIds.map((id) => staged.filter((r) => r.jobId === id));
    }),
    allocated: new DataLoader(async (nodeIds) => {
      const totals = await allocatedOn(s.mongo, nodeIds);
      return nodeIds.map((id) => totals.get(id) ?? null);
    }),
  };
}

export function createContext(services: Services, principal: Caller | null, authError: string | null, clientAddress = "unknown"): Context {
  return { principal, authError, services, loaders: createLoaders(services), log: services.log, clientAddress };
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

export { canSee } from "../auth/access.js";
