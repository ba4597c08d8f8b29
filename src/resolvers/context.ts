import DataLoader from "dataloader";
import { budgetKey, type RateLimits } from "../api/rate-limit.js";
import type { Principal, TokenService } from "../auth/tokens.js";
import type { JobService } from "../core/jobs.js";
import type { RunService } from "../core/runs.js";
import type { UserService } from "../core/users.js";
import { ForbiddenError, UnauthenticatedError } from "../errors.js";
import type { Logger } from "../log.js";
import type { Clock, SharedState } from "../scheduler/ports.js";
import type { Mongo } from "../store/mongo.js";
import type { JobDoc, RunDoc, UserDoc } from "../store/types.js";

/** Process-wide services the resolvers call; built once by the API role. */
export interface Services {
  mongo: Mongo;
  state: SharedState;
  users: UserService;
  jobs: JobService;
  runs: RunService;
  tokens: TokenService;
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
}

export interface Context {
  principal: Principal | null;
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
  };
}

export function createContext(services: Services, principal: Principal | null, authError: string | null, clientAddress = "unknown"): Context {
  return { principal, authError, services, loaders: createLoaders(services), log: services.log, clientAddress };
}

export function requireUser(ctx: Context): Principal {
  if (!ctx.principal) throw new UnauthenticatedError(ctx.authError ?? "log in first: send `Authorization: Bearer <token>` (mutation login)");
  return ctx.principal;
}

export function requireAdmin(ctx: Context): Principal {
  const p = requireUser(ctx);
  if (p.role !== "ADMIN") throw new ForbiddenError("only administrators may do this");
  return p;
}

/** requireUser, then one call from the user's submission budget (createJob, triggerJob, backfillJob). */
export async function requireSubmitter(ctx: Context): Promise<Principal> {
  const p = requireUser(ctx);
  const { key, who } = budgetKey(p, ctx.clientAddress);
  await ctx.services.limits.submissions.take(key, who);
  return p;
}

/** Whether the caller may see a document owned by `ownerId`. */
export function canSee(p: Principal, ownerId: string): boolean {
  return p.role === "ADMIN" || p.userId === ownerId;
}
