import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root, Subscription } from "type-graphql";
import type { SubscribeResolverData } from "type-graphql";
import type { RunEvent } from "../core/index.js";
import { RunStatus } from "../schema/index.js";
import { Job } from "../schema/index.js";
import { BulkRunResult, Run, RunConnection, RunFilter } from "../schema/index.js";
import { canSee } from "../auth/index.js";
import { ValidationError } from "../domain/index.js";
import { requireSubmitter, requireUser, type Context } from "./context.js";
import { logRefusal, toGraphQLError } from "./errors.js";
import { toJob, toRun } from "./mappers.js";
import { mapPage, pageArgs } from "./pagination.js";
import { countedStream } from "./event-stream.js";
import { cancelOne, cancelRuns, retryOne, retryRuns } from "./bulk-runs.js";
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
    return toRun(await ctx.lookups.run(requireUser(ctx), id), ctx.lookups.now());
  }

  @Query(() => RunConnection, {
    description:
      "Your runs (admins: everyone's), newest first by scheduledFor: across all your jobs and DAG tasks, or one job's history with jobId. " +
      "status and filter narrow it (every condition must hold). A job, DAG or DAG run id you cannot see is NOT_FOUND.",
  })
  async runs(
    @Ctx() ctx: Context,
    @Arg("jobId", () => ID, { nullable: true, description: "One job's runs (its history, also after the job was deleted)." }) jobId?: string | null,
    @Arg("status", () => RunStatus, { nullable: true }) status?: RunStatus | null,
    @Arg("filter", () => RunFilter, { nullable: true }) filter?: RunFilter | null,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<RunConnection> {
    const p = requireUser(ctx);
    const search = { ...filter, jobId: jobId ?? null, status: status ?? null };
    return mapPage(await ctx.services.runReads.search(p, search, pageArgs(first, after), ctx.lookups), (r) => toRun(r, ctx.lookups.now()));
  }

  @Query(() => RunConnection, { description: "Dead letters: runs whose every attempt failed, newest first. Re-run one with retryRun." })
  async deadLetters(
    @Ctx() ctx: Context,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<RunConnection> {
    const p = requireUser(ctx);
    return mapPage(await ctx.services.runReads.deadLetters(p, pageArgs(first, after)), (r) => toRun(r, ctx.lookups.now()));
  }

  @Mutation(() => Run, {
    description:
      "Cancels a run. A waiting run (PENDING, QUEUED, RETRY_SCHEDULED) is answered CANCELLED at once. A RUNNING one is answered " +
      "CANCELLING (cancelRequested: true): its executor kills the process group and records CANCELLED moments later; follow it with runUpdated.",
  })
  async cancelRun(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<Run> {
    return toRun(await cancelOne(ctx, requireUser(ctx), id), ctx.lookups.now());
  }

  @Mutation(() => Run, {
    description: "Re-runs a dead, failed, timed-out or cancelled run with one more attempt (a DAG task's run: FAILED_PRECONDITION, use retryDagRun). Takes one submission, as triggerJob.",
  })
  async retryRun(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<Run> {
    // A retry makes a run, as a trigger does: one submission (a loop of cancelRun and retryRun was
    // bounded only by the request rate).
    return toRun(await retryOne(ctx, await requireSubmitter(ctx), id), ctx.lookups.now());
  }

  @Mutation(() => [BulkRunResult], {
    description:
      "cancelRun for each of up to 100 ids (repeats counted once), in their order: one entry per id, with the run as cancelRun answers it, " +
      "or the error cancelRun would have given for it (code and message). One id's error does not stop the others.",
  })
  async cancelRuns(@Arg("ids", () => [ID]) ids: string[], @Ctx() ctx: Context): Promise<BulkRunResult[]> {
    return cancelRuns(ctx, requireUser(ctx), ids);
  }

  @Mutation(() => [BulkRunResult], {
    description:
      "retryRun for each of up to 100 ids (repeats counted once), in their order: one entry per id, with the run as retryRun answers it, " +
      "or the error retryRun would have given for it. Takes one submission per id, as retryRun: once the budget is spent, that id and the rest are RATE_LIMITED entries.",
  })
  async retryRuns(@Arg("ids", () => [ID]) ids: string[], @Ctx() ctx: Context): Promise<BulkRunResult[]> {
    return retryRuns(ctx, requireUser(ctx), ids);
  }

  @Subscription(() => Run, {
    description: "Every status change of the runs of a job, of one run, or (no arguments) of all your runs.",
    subscribe: subscribeRunUpdated,
  })
  runUpdated(
    @Root() run: RunEvent,
    @Arg("jobId", () => ID, { nullable: true }) _jobId?: string | null,
    @Arg("runId", () => ID, { nullable: true }) _runId?: string | null,
    @Ctx() ctx?: Context,
  ): Run {
    // A run staged ahead is created QUEUED in the store: its event reads SCHEDULED until its time.
    return toRun(run, ctx!.lookups.now());
  }

  @FieldResolver(() => Job, { nullable: true, description: "Null when the job was deleted." })
  async job(@Root() run: Run, @Ctx() ctx: Context): Promise<Job | null> {
    const doc = await ctx.lookups.jobIfVisible(requireUser(ctx), run.jobId);
    return doc ? toJob(doc) : null;
  }
}
