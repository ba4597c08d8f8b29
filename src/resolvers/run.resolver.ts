import type { Filter } from "mongodb";
import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import type { SubscribeResolverData } from "type-graphql";
import { RunStatus as DomainRunStatus } from "../domain/lifecycle.js";
import type { RunEvent } from "../core/events.js";
import type { RunDoc } from "../domain/documents.js";
import { RunStatus } from "../schema/enums.js";
import { Job } from "../schema/job.type.js";
import { Run, RunConnection } from "../schema/run.type.js";
import { canSee, visible } from "../auth/access.js";
import { requireUser, type Context } from "./context.js";
import { logRefusal, toGraphQLError } from "./errors.js";
import { listRuns } from "./job.resolver.js";
import { toJob, toRun } from "./mappers.js";
import { afterDesc, connection, pageSize } from "./pagination.js";
import { runStream } from "./run-stream.js";

interface RunUpdatedArgs {
  jobId?: string | null;
  runId?: string | null;
}

/**
 * Authorises a runUpdated subscription before any event flows: the job or run must be the
 * caller's (admins: any). Without arguments a user gets all of their own runs' events.
 */
async function subscribeRunUpdated({ args, context }: SubscribeResolverData<unknown, RunUpdatedArgs, Context>) {
  try {
    const p = requireUser(context);
    const { jobId, runId } = args;
    if (jobId) visible(p, "job", jobId, await context.loaders.job.load(jobId));
    if (runId) visible(p, "run", runId, await context.loaders.run.load(runId));
    return runStream(
      context.services.runs.events,
      (run) =>
        canSee(p, run.ownerId) && (!jobId || run.jobId === jobId) && (!runId || run._id === runId),
    );
  } catch (e) {
    logRefusal(context, "Subscription.runUpdated", e, args as Record<string, unknown>);
    throw toGraphQLError(e) ?? e;
  }
}

@Resolver(() => Run)
export class RunResolver {
  @Query(() => Run)
  async run(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<Run> {
    const p = requireUser(ctx);
    return toRun(visible(p, "run", id, await ctx.loaders.run.load(id)));
  }

  @Query(() => RunConnection, { description: "A job's execution history, newest first." })
  async runs(
    @Arg("jobId", () => ID) jobId: string,
    @Ctx() ctx: Context,
    @Arg("status", () => RunStatus, { nullable: true }) status?: RunStatus | null,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<RunConnection> {
    return listRuns(ctx, jobId, status ?? null, first, after);
  }

  @Query(() => RunConnection, { description: "Dead letters: runs whose every attempt failed, newest first. Re-run one with retryRun." })
  async deadLetters(
    @Ctx() ctx: Context,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<RunConnection> {
    const p = requireUser(ctx);
    const size = pageSize(first);
    const q: Filter<RunDoc> = { status: DomainRunStatus.DEAD, ...afterDesc("finishedAt", after) };
    if (p.role !== "ADMIN") q.ownerId = p.userId;
    const docs = await ctx.services.mongo.c.runs.find(q).sort({ finishedAt: -1, _id: -1 }).limit(size + 1).toArray();
    return connection(docs, size, (d) => d.finishedAt ?? d.updatedAt, toRun);
  }

  @Mutation(() => Run, {
    description:
      "Cancels a run. A waiting run (PENDING, QUEUED, RETRY_SCHEDULED) is answered CANCELLED at once. A RUNNING one is answered " +
      "CANCELLING (cancelRequested: true): its executor kills the process group and records CANCELLED moments later; follow it with runUpdated.",
  })
  async cancelRun(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<Run> {
    const p = requireUser(ctx);
    return toRun(await ctx.services.runs.cancel(p, id, `cancelled by ${p.username}`));
  }

  @Mutation(() => Run, { description: "Re-runs a dead, failed, timed-out or cancelled run with one more attempt." })
  async retryRun(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<Run> {
    const p = requireUser(ctx);
    return toRun(await ctx.services.runs.retryRun(p, id));
  }

  @Subscription(() => Run, {
    description: "Every status change of the runs of a job, of one run, or (no arguments) of all your runs.",
    subscribe: subscribeRunUpdated,
  })
  runUpdated(
    @Root() run: RunEvent,
    @Arg("jobId", () => ID, { nullable: true }) _jobId?: string | null,
    @Arg("runId", () => ID, { nullable: true }) _runId?: string | null,
  ): Run {
    return toRun(run);
  }

  @FieldResolver(() => Job, { nullable: true, description: "Null when the job was deleted." })
  async job(@Root() run: Run, @Ctx() ctx: Context): Promise<Job | null> {
    const p = requireUser(ctx);
    const doc = await ctx.loaders.job.load(run.jobId);
    return doc && canSee(p, doc.ownerId) ? toJob(doc) : null;
  }
}
