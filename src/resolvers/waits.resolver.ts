/**
 * `Run.waiting` and `Job.problems` (docs/waiting.md): each request's WaitReads batch the reads
 * behind them, so a page of runs or jobs asking for them costs a few store queries in all.
 */
import { Ctx, FieldResolver, Resolver, Root } from "type-graphql";
import type { WaitReads } from "../core/index.js";
import { DagRunTask, Job, Run, WaitReason } from "../schema/index.js";
import { requireUser, type Context } from "./context.js";

/** Each request's (or subscription event's) WaitReads, made on first use. */
const reads = new WeakMap<object, WaitReads>();

function waitsOf(ctx: Context): WaitReads {
  let w = reads.get(ctx.lookups);
  if (!w) reads.set(ctx.lookups, (w = ctx.services.waits.forRequest(ctx.lookups)));
  return w;
}

@Resolver(() => Run)
export class RunWaitingResolver {
  @FieldResolver(() => [WaitReason], {
    description:
      "Why this run has not started, as the server sees it now: for a PENDING, QUEUED or RETRY_SCHEDULED run, one entry per cause " +
      "(RETRY_BACKOFF, NOT_DUE, OVERLAP, POOL_UNSERVED, USER_CONCURRENCY_LIMIT, or POOL_BUSY when nothing else holds it); empty once it started or ended. " +
      "No rate limit holds a run that exists: rate limits refuse calls (see Job.problems, RATE_LIMITED).",
  })
  async waiting(@Root() run: Run, @Ctx() ctx: Context): Promise<WaitReason[]> {
    return waitsOf(ctx).run(requireUser(ctx), run.id, run.status, run.source);
  }
}

@Resolver(() => Job)
export class JobProblemsResolver {
  @FieldResolver(() => [WaitReason], {
    description:
      "Why this job makes no runs now, or its runs do not start: PAUSED, OWNER_DELETED, NO_MORE_FIRES, POOL_UNSERVED, USER_CONCURRENCY_LIMIT, OVERLAP, " +
      "MISFIRE, DST_SKIPPED, BACKLOG (from its latest fire-ledger outcome and the state now), RATE_LIMITED (your submission budget is spent). Empty when nothing holds it.",
  })
  async problems(@Root() job: Job, @Ctx() ctx: Context): Promise<WaitReason[]> {
    const p = requireUser(ctx);
    const doc = await ctx.lookups.jobIfExists(p, job.id);
    return doc ? waitsOf(ctx).job(p, doc) : [];
  }
}

@Resolver(() => DagRunTask)
export class DagTaskWaitingResolver {
  @FieldResolver(() => [WaitReason], {
    description:
      "Why this task has not started: its run's `waiting` once it has a run; before that (PENDING) WAITING_ON_PARENT (parents not ended), " +
      "MAX_PARALLEL (the DAG run's maxParallel is full), OVERLAP (the DAG run is held behind another) or NOT_DUE (staged ahead). Empty once it started or ended.",
  })
  async waiting(@Root() task: DagRunTask, @Ctx() ctx: Context): Promise<WaitReason[]> {
    const p = requireUser(ctx);
    if (task.run) return waitsOf(ctx).run(p, task.run.id, task.run.status, task.run.source);
    const dagRunId = (task as DagRunTask & { dagRunId?: string }).dagRunId;
    return dagRunId && task.status === "PENDING" && task.mapIndex === null ? waitsOf(ctx).task(p, dagRunId, task.key) : [];
  }
}
