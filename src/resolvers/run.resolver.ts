import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import type { SubscribeResolverData } from "type-graphql";
import type { RunEvent } from "../core/index.js";
import { RunStatus } from "../schema/index.js";
import { Job } from "../schema/index.js";
import { Run, RunConnection } from "../schema/index.js";
import { canSee } from "../auth/index.js";
import { ConflictError, ValidationError } from "../domain/index.js";
import { requireSubmitter, requireUser, type Context } from "./context.js";
import { logRefusal, toGraphQLError } from "./errors.js";
import { listRuns } from "./job.resolver.js";
import { toJob, toRun } from "./mappers.js";
import { mapPage, pageArgs } from "./pagination.js";
import { countedStream } from "./event-stream.js";
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
    // `!= null`, not truthiness: an empty id is an id that does not exist (NOT_FOUND), not "every run".
    if (jobId != null) await context.lookups.job(p, jobId);
    if (runId != null) {
      const run = await context.lookups.run(p, runId);
      if (jobId != null && run.jobId !== jobId) {
        throw new ValidationError("runId", `run ${runId} is a run of job ${run.jobId}, not of job ${jobId}, so no event would match both: give one of them, or both of the same job`);
      }
    }
    // At most MAX_EVENT_SUBSCRIPTIONS_PER_USER at once: each one decodes every user's run events.
    return countedStream(context.services.events, p, () =>
      runStream(context.services.events, (run) => canSee(p, run.ownerId) && (jobId == null || run.jobId === jobId) && (runId == null || run._id === runId)),
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
    return toRun(await ctx.lookups.run(requireUser(ctx), id));
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
    return mapPage(await ctx.services.runReads.deadLetters(p, pageArgs(first, after)), toRun);
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

  @Mutation(() => Run, {
    description: "Re-runs a dead, failed, timed-out or cancelled run with one more attempt (a DAG task's run: CONFLICT, use retryDagRun). Takes one submission, as triggerJob.",
  })
  async retryRun(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<Run> {
    // A retry makes a run, as a trigger does: one submission (a loop of cancelRun and retryRun was
    // bounded only by the request rate).
    const p = await requireSubmitter(ctx);
    // A DAG task's run belongs to its DAG run, which has decided on its end already (its children
    // ran, or were UPSTREAM_FAILED): running it again outside would change nothing there but its result.
    const run = await ctx.lookups.run(p, id);
    if (run.dagRunId) {
      throw new ConflictError(`run ${id} is task ${JSON.stringify(run.taskKey)} of DAG run ${run.dagRunId}; retry it with retryDagRun(id: "${run.dagRunId}"), which re-runs its failed tasks and their children`);
    }
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
    const doc = await ctx.lookups.jobIfVisible(requireUser(ctx), run.jobId);
    return doc ? toJob(doc) : null;
  }
}
