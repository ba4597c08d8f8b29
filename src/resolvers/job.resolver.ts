import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { ValidationError } from "../domain/index.js";
import { parsePositiveDuration } from "../timing/index.js";
import { JobStatus, RunStatus } from "../schema/index.js";
import { CreateJobInput, JobFilter, ScheduleInput, UpdateJobInput } from "../schema/index.js";
import { BackfillResult, FireConnection, Job, JobConnection, JobHealth, NextFire, SchedulePreview, UpcomingFireConnection } from "../schema/index.js";
import { Run, RunConnection } from "../schema/index.js";
import { User } from "../schema/index.js";
import { DateTime } from "../schema/index.js";
import { requireSubmitter, requireUser, takeSubmissions, type Context } from "./context.js";
import { jobInput, jobPatch, scheduleIn } from "./job-input.js";
import { toFire, toJob, toRun, toUser } from "./mappers.js";
import { mapPage, pageArgs } from "./pagination.js";

const IDEMPOTENCY_KEY =
  "Makes retries safe: the same key from the same user within 24 h returns the first request's result and changes nothing; " +
  "the same key with different input answers FAILED_PRECONDITION. Use a fresh random key (e.g. a UUID) per intended request.";

@Resolver(() => Job)
export class JobResolver {
  @Query(() => Job, { description: "A job you own (admins: any job)." })
  async job(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<Job> {
    return toJob(await ctx.lookups.job(requireUser(ctx), id));
  }

  @Query(() => JobConnection, { description: "Your jobs, newest first. Admins see everyone's and may filter by owner." })
  async jobs(
    @Ctx() ctx: Context,
    @Arg("filter", () => JobFilter, { nullable: true }) filter?: JobFilter | null,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<JobConnection> {
    const p = requireUser(ctx);
    return mapPage(await ctx.services.jobs.list(p, filter, pageArgs(first, after)), toJob);
  }

  @Query(() => UpcomingFireConnection, {
    description:
      "Your jobs (admins: everyone's) due within the window (ISO-8601 duration, e.g. PT1H, at most P31D), soonest first: each job once, at its next fire. " +
      "A cursor names a position (a fire instant and a job id): the next page lists the jobs due after it, so a job that fired meanwhile may come again at its next fire.",
  })
  async upcomingFires(
    @Arg("within", () => String) within: string,
    @Ctx() ctx: Context,
    @Arg("first", () => Int, { nullable: true, description: "1–100, default 20." }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<UpcomingFireConnection> {
    const p = requireUser(ctx);
    const page = pageArgs(first, after);
    const windowMs = parsePositiveDuration(within, "within");
    if (windowMs > 31 * 24 * 3600 * 1000) throw new ValidationError("within", "at most P31D");
    return mapPage(await ctx.services.jobs.upcoming(p, windowMs, page), ({ job, at }) => ({ job: toJob(job), at }));
  }

  @Query(() => SchedulePreview, {
    description:
      "What a schedule would do as a new job's, before saving it: its summary and next fires (1–100, in UTC and in its zone, as Job.nextFires). " +
      "Checked as createJob checks a schedule: the same BAD_USER_INPUT errors.",
  })
  async previewSchedule(
    @Arg("schedule", () => ScheduleInput) schedule: ScheduleInput,
    @Ctx() ctx: Context,
    @Arg("count", () => Int, { defaultValue: 5 }) count: number,
  ): Promise<SchedulePreview> {
    requireUser(ctx);
    checkFireCount(count);
    const { description, fires } = ctx.services.jobs.previewSchedule(scheduleIn(schedule), count);
    return { description, nextFires: fires };
  }

  @Mutation(() => Job, { description: "Read `warnings` in the answer: e.g. a pool no executor serves." })
  async createJob(
    @Arg("input", () => CreateJobInput) input: CreateJobInput,
    @Ctx() ctx: Context,
    @Arg("idempotencyKey", () => String, { nullable: true, description: IDEMPOTENCY_KEY }) idempotencyKey: string | null | undefined,
  ): Promise<Job> {
    return toJob(await ctx.services.jobs.create(await requireSubmitter(ctx), jobInput(input), { idempotencyKey }));
  }

  @Mutation(() => Job)
  async updateJob(
    @Arg("id", () => ID) id: string,
    @Arg("input", () => UpdateJobInput) input: UpdateJobInput,
    @Ctx() ctx: Context,
  ): Promise<Job> {
    return toJob(await ctx.services.jobs.update(requireUser(ctx), id, jobPatch(input)));
  }

  @Mutation(() => ID, { description: "Deletes the job; its waiting runs are cancelled, a running one finishes. Returns the id." })
  async deleteJob(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<string> {
    return (await ctx.services.jobs.delete(requireUser(ctx), id))._id;
  }

  @Mutation(() => Job)
  async pauseJob(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<Job> {
    return toJob(await ctx.services.jobs.pause(requireUser(ctx), id));
  }

  @Mutation(() => Job, { description: "Fires missed while paused are recorded as SKIPPED_PAUSED, not run." })
  async resumeJob(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<Job> {
    return toJob(await ctx.services.jobs.resume(requireUser(ctx), id));
  }

  @Mutation(() => Run, { description: "Runs the job now, outside its schedule." })
  async triggerJob(
    @Arg("id", () => ID) id: string,
    @Ctx() ctx: Context,
    @Arg("idempotencyKey", () => String, { nullable: true, description: IDEMPOTENCY_KEY }) idempotencyKey: string | null | undefined,
  ): Promise<Run> {
    return toRun(await ctx.services.jobs.trigger(await requireSubmitter(ctx), id, { idempotencyKey }), ctx.lookups.now());
  }

  @Mutation(() => Job, {
    description:
      "Sets the next fire time. A ONCE job runs at `at` instead; a recurring job fires once at `at` (its slots before it are recorded MISSED), then goes on with its schedule as before (an INTERVAL keeps its anchor). Until that fire, schedule.description names it.",
  })
  async rescheduleJob(
    @Arg("id", () => ID) id: string,
    @Arg("at", () => DateTime) at: Date,
    @Ctx() ctx: Context,
  ): Promise<Job> {
    return toJob(await ctx.services.jobs.reschedule(requireUser(ctx), id, at.getTime()));
  }

  @Mutation(() => BackfillResult, {
    description: "Creates runs for the schedule's slots in a past range (at most 1000; existing ones are not repeated). Takes one submission per slot (at most the whole budget).",
  })
  async backfillJob(
    @Arg("id", () => ID) id: string,
    @Arg("from", () => DateTime) from: Date,
    @Arg("to", () => DateTime) to: Date,
    @Ctx() ctx: Context,
    @Arg("idempotencyKey", () => String, { nullable: true, description: IDEMPOTENCY_KEY }) idempotencyKey: string | null | undefined,
  ): Promise<BackfillResult> {
    const p = await requireSubmitter(ctx);
    // A backfill is as many submissions as it makes runs (at most a whole window's budget): a loop
    // of backfills must not make 1,000 runs per submission where triggerJob makes one.
    const r = await ctx.services.jobs.backfill(p, id, from.getTime(), to.getTime(), { idempotencyKey, admit: (runs, why) => takeSubmissions(ctx, p, runs - 1, why) });
    return { requested: r.requested, existing: r.existing, runs: r.created.map((run) => toRun(run, ctx.lookups.now())) };
  }

  @FieldResolver(() => JobStatus, {
    description:
      "ACTIVE while a fire is still to come (its run staged ahead included), PAUSED, or COMPLETED when the schedule has no more slots. " +
      "It says nothing about how the runs went: see lastRun.",
  })
  async status(@Root() job: Job, @Ctx() ctx: Context): Promise<JobStatus> {
    if (job.status !== JobStatus.COMPLETED) return job.status;
    return (await ctx.lookups.stagedFires(job.id)).length > 0 ? JobStatus.ACTIVE : job.status;
  }

  @FieldResolver(() => DateTime, { nullable: true, description: "When the next fire is due (including spread and jitter)." })
  async nextFireAt(@Root() job: Job, @Ctx() ctx: Context): Promise<Date | null> {
    const staged = (await ctx.lookups.stagedFires(job.id))[0]?.notBefore ?? null;
    if (!staged) return job.nextFireAt;
    return job.nextFireAt && job.nextFireAt < staged ? job.nextFireAt : staged;
  }

  @FieldResolver(() => [String], { description: "Problems that keep the job's runs from running, as of now (e.g. a pool no executor serves). Empty when all is well." })
  async warnings(@Root() job: Job, @Ctx() ctx: Context): Promise<string[]> {
    return ctx.services.pools.warnings(job);
  }

  @FieldResolver(() => JobHealth)
  async health(@Root() job: Job, @Ctx() ctx: Context): Promise<JobHealth> {
    return ctx.services.jobs.health(job.id, job.spec);
  }

  @FieldResolver(() => User, { nullable: true, description: "Null when the owner was deleted (see ownerDeleted)." })
  async owner(@Root() job: Job, @Ctx() ctx: Context): Promise<User | null> {
    const u = await ctx.lookups.owner(job);
    return u ? toUser(u) : null;
  }

  @FieldResolver(() => RunConnection, { description: "This job's runs, newest first." })
  async runs(
    @Root() job: Job,
    @Ctx() ctx: Context,
    @Arg("status", () => RunStatus, { nullable: true }) status?: RunStatus | null,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<RunConnection> {
    return listRuns(ctx, job.id, status ?? null, first, after);
  }

  @FieldResolver(() => [NextFire], { description: "The next fire times (1–100), in UTC and in the job's zone." })
  async nextFires(
    @Root() job: Job,
    @Ctx() ctx: Context,
    @Arg("count", () => Int, { defaultValue: 5 }) count: number,
  ): Promise<NextFire[]> {
    checkFireCount(count);
    return ctx.services.jobs.nextFires(requireUser(ctx), job.id, count, ctx.lookups);
  }

  @FieldResolver(() => FireConnection, { description: "The fire ledger: one outcome per schedule slot, newest first." })
  async fires(
    @Root() job: Job,
    @Ctx() ctx: Context,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<FireConnection> {
    return mapPage(await ctx.services.jobs.fires(job.id, pageArgs(first, after)), toFire);
  }
}

/** The most next fires a field answers (Job.nextFires, previewSchedule). */
export const MAX_FIRE_COUNT = 100;

/** How many next fires a field answers (Job.nextFires, previewSchedule): 1–MAX_FIRE_COUNT. */
function checkFireCount(count: number): void {
  if (!Number.isInteger(count) || count < 1 || count > MAX_FIRE_COUNT) throw new ValidationError("count", `must be from 1 to ${MAX_FIRE_COUNT}`);
}

/** Runs of one job the caller may see, newest first (by scheduled time). */
export async function listRuns(
  ctx: Context,
  jobId: string,
  status: RunStatus | null,
  first: number | null | undefined,
  after: string | null | undefined,
): Promise<RunConnection> {
  const p = requireUser(ctx);
  return mapPage(await ctx.services.runReads.ofJob(p, jobId, status, pageArgs(first, after), ctx.lookups), (r) => toRun(r, ctx.lookups.now()));
}
