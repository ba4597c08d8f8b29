import type { Filter } from "mongodb";
import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { ForbiddenError, ValidationError } from "../domain/errors.js";
import type { JobInput, JobPatch, JobSpecInput as DomainSpecInput } from "../core/jobs.js";
import { ownerScope, visible } from "../auth/access.js";
import { RunStatus as DomainRunStatus } from "../domain/lifecycle.js";
import { nextFires, parsePositiveDuration, type ScheduleInput as DomainScheduleInput } from "../scheduler/timing/index.js";
import type { FireDoc, JobDoc, RunDoc } from "../domain/documents.js";
import { JobStatus, RunStatus } from "../schema/enums.js";
import { CreateJobInput, JobFilter, JobSpecInput, RetryInput, ScheduleInput, UpdateJobInput } from "../schema/job.input.js";
import { BackfillResult, FireConnection, Job, JobConnection, JobHealth, NextFire, UpcomingFire } from "../schema/job.type.js";
import { Run, RunConnection } from "../schema/run.type.js";
import { User } from "../schema/user.type.js";
import { DateTime } from "../schema/scalars.js";
import { requireSubmitter, requireUser, type Context } from "./context.js";
import { statusFilter, toFire, toJob, toRun, toUser } from "./mappers.js";
import { afterDesc, connection, pageSize } from "./pagination.js";

const ms = (d: Date | null | undefined) => (d == null ? undefined : d.getTime());

const IDEMPOTENCY_KEY =
  "Makes retries safe: the same key from the same user within 24 h returns the first request's result and changes nothing; " +
  "the same key with different input answers CONFLICT. Use a fresh random key (e.g. a UUID) per intended request.";

function scheduleIn(s: ScheduleInput): DomainScheduleInput {
  return {
    kind: s.kind,
    at: ms(s.at),
    delay: s.delay ?? undefined,
    every: s.every ?? undefined,
    cron: s.cron ?? undefined,
    timezone: s.timezone ?? undefined,
    startAt: ms(s.startAt),
    endAt: ms(s.endAt),
    maxFires: s.maxFires ?? undefined,
    dstGap: s.dstGap ?? undefined,
    dstRepeat: s.dstRepeat ?? undefined,
    jitter: s.jitter ?? undefined,
    spread: s.spread ?? undefined,
  };
}

function specIn(s: JobSpecInput): DomainSpecInput {
  return { kind: s.kind, command: s.command, argv: s.argv, env: s.env, timeout: s.timeout, pool: s.pool, resources: s.resources, network: s.network };
}

function retryIn(r: RetryInput | null | undefined) {
  if (!r) return null;
  return {
    maxAttempts: r.maxAttempts ?? undefined,
    backoff: r.backoff ?? undefined,
    initial: r.initial ?? undefined,
    factor: r.factor ?? undefined,
    max: r.max ?? undefined,
    jitter: r.jitter ?? undefined,
    nonRetryableExitCodes: r.nonRetryableExitCodes ?? undefined,
    retryOnOomKill: r.retryOnOomKill ?? undefined,
  };
}

function jobInput(i: CreateJobInput): JobInput {
  return {
    name: i.name,
    description: i.description,
    tags: i.tags,
    schedule: scheduleIn(i.schedule),
    spec: specIn(i.spec),
    priority: i.priority,
    retry: retryIn(i.retry),
    overlap: i.overlap,
    misfire: i.misfire,
    catchupWindow: i.catchupWindow,
    paused: i.paused,
  };
}

function jobPatch(i: UpdateJobInput): JobPatch {
  const p: JobPatch = {};
  if (i.name != null) p.name = i.name;
  if (i.description !== undefined) p.description = i.description;
  if (i.tags != null) p.tags = i.tags;
  if (i.schedule != null) p.schedule = scheduleIn(i.schedule);
  if (i.spec != null) p.spec = specIn(i.spec);
  if (i.priority != null) p.priority = i.priority;
  if (i.retry != null) p.retry = retryIn(i.retry);
  if (i.overlap != null) p.overlap = i.overlap;
  if (i.misfire != null) p.misfire = i.misfire;
  if (i.catchupWindow != null) p.catchupWindow = i.catchupWindow;
  return p;
}

@Resolver(() => Job)
export class JobResolver {
  @Query(() => Job, { description: "A job you own (admins: any job)." })
  async job(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<Job> {
    const p = requireUser(ctx);
    return toJob(visible(p, "job", id, await ctx.loaders.job.load(id)));
  }

  @Query(() => JobConnection, { description: "Your jobs, newest first. Admins see everyone's and may filter by owner." })
  async jobs(
    @Ctx() ctx: Context,
    @Arg("filter", () => JobFilter, { nullable: true }) filter?: JobFilter | null,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<JobConnection> {
    const p = requireUser(ctx);
    const size = pageSize(first);
    const q: Filter<JobDoc> = {};
    if (filter?.ownerId) {
      if (p.role !== "ADMIN" && filter.ownerId !== p.userId) throw new ForbiddenError("only administrators may list other users' jobs");
      q.ownerId = filter.ownerId;
    }
    if (filter?.status) q.status = filter.status;
    if (filter?.name) q.name = filter.name;
    if (filter?.tag) q.tags = filter.tag;
    const scoped = ownerScope<JobDoc>(p, { ...q, ...afterDesc("createdAt", after) });
    const docs = await ctx.services.mongo.c.jobs.find(scoped).sort({ createdAt: -1, _id: -1 }).limit(size + 1).toArray();
    return connection(docs, size, (d) => d.createdAt, toJob);
  }

  @Query(() => [UpcomingFire], { description: "Jobs due within the window (ISO-8601 duration, e.g. PT1H), soonest first." })
  async upcomingFires(
    @Arg("within", () => String) within: string,
    @Ctx() ctx: Context,
    @Arg("first", () => Int, { nullable: true, defaultValue: 100 }) first?: number | null,
  ): Promise<UpcomingFire[]> {
    const p = requireUser(ctx);
    const windowMs = parsePositiveDuration(within, "within");
    if (windowMs > 31 * 24 * 3600 * 1000) throw new ValidationError("within", "at most P31D");
    const size = pageSize(first ?? 100);
    const now = ctx.services.clock();
    const until = new Date(now + windowMs);
    const { c } = ctx.services.mongo;
    const docs = await c.jobs
      .find(ownerScope<JobDoc>(p, { nextFireAt: { $ne: null, $lte: until }, paused: false }))
      .sort({ nextFireAt: 1 })
      .limit(size)
      .toArray();
    // Fires whose runs are staged ahead of their time come before the job's nextFireAt.
    const staged = await c.runs
      .find(ownerScope<RunDoc>(p, { status: DomainRunStatus.QUEUED, notBefore: { $gt: new Date(now), $lte: until } }), {
        projection: { jobId: 1, notBefore: 1 },
        sort: { notBefore: 1 },
      })
      .toArray();
    const at = new Map<string, Date>();
    for (const d of docs) at.set(d._id, d.nextFireAt!);
    for (const r of staged) if (!at.has(r.jobId) || r.notBefore! < at.get(r.jobId)!) at.set(r.jobId, r.notBefore!);
    const known = new Map(docs.map((d) => [d._id, d]));
    const missing = [...at.keys()].filter((id) => !known.has(id));
    if (missing.length) for (const j of await c.jobs.find({ _id: { $in: missing }, paused: false }).toArray()) known.set(j._id, j);
    return [...at.entries()]
      .filter(([id]) => known.has(id))
      .sort((a, b) => a[1].getTime() - b[1].getTime())
      .slice(0, size)
      .map(([id, when]) => ({ job: toJob(known.get(id)!), at: when }));
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
    return toRun(await ctx.services.jobs.trigger(await requireSubmitter(ctx), id, { idempotencyKey }));
  }

  @Mutation(() => Job, { description: "Sets the next fire time." })
  async rescheduleJob(
    @Arg("id", () => ID) id: string,
    @Arg("at", () => DateTime) at: Date,
    @Ctx() ctx: Context,
  ): Promise<Job> {
    return toJob(await ctx.services.jobs.reschedule(requireUser(ctx), id, at.getTime()));
  }

  @Mutation(() => BackfillResult, { description: "Creates runs for the schedule's slots in a past range (at most 1000; existing ones are not repeated)." })
  async backfillJob(
    @Arg("id", () => ID) id: string,
    @Arg("from", () => DateTime) from: Date,
    @Arg("to", () => DateTime) to: Date,
    @Ctx() ctx: Context,
    @Arg("idempotencyKey", () => String, { nullable: true, description: IDEMPOTENCY_KEY }) idempotencyKey: string | null | undefined,
  ): Promise<BackfillResult> {
    const r = await ctx.services.jobs.backfill(await requireSubmitter(ctx), id, from.getTime(), to.getTime(), { idempotencyKey });
    return { requested: r.requested, existing: r.existing, runs: r.created.map(toRun) };
  }

  @FieldResolver(() => JobStatus, { description: "ACTIVE while a fire is still to come, its run staged ahead included." })
  async status(@Root() job: Job, @Ctx() ctx: Context): Promise<JobStatus> {
    if (job.status !== JobStatus.COMPLETED) return job.status;
    return (await ctx.loaders.stagedFires.load(job.id)).length > 0 ? JobStatus.ACTIVE : job.status;
  }

  @FieldResolver(() => DateTime, { nullable: true, description: "When the next fire is due (including spread and jitter)." })
  async nextFireAt(@Root() job: Job, @Ctx() ctx: Context): Promise<Date | null> {
    const staged = (await ctx.loaders.stagedFires.load(job.id))[0]?.notBefore ?? null;
    if (!staged) return job.nextFireAt;
    return job.nextFireAt && job.nextFireAt < staged ? job.nextFireAt : staged;
  }

  @FieldResolver(() => [String], { description: "Problems that keep the job's runs from running, as of now (e.g. a pool no executor serves). Empty when all is well." })
  async warnings(@Root() job: Job, @Ctx() ctx: Context): Promise<string[]> {
    return ctx.services.pools.warnings(job);
  }

  @FieldResolver(() => JobHealth)
  async health(@Root() job: Job, @Ctx() ctx: Context): Promise<JobHealth> {
    const runs = ctx.services.mongo.c.runs;
    const queued = { jobId: job.id, status: DomainRunStatus.QUEUED };
    const [served, warnings, queuedRuns, oldest] = await Promise.all([
      ctx.services.pools.served(),
      ctx.services.pools.warnings(job),
      runs.countDocuments(queued),
      runs.findOne(queued, { sort: { queuedAt: 1 }, projection: { queuedAt: 1 } }),
    ]);
    const servingNodes = served.get(job.spec.pool) ?? 0;
    return { poolServed: servingNodes > 0, servingNodes, queuedRuns, oldestQueuedAt: oldest?.queuedAt ?? null, warnings };
  }

  @FieldResolver(() => User, { nullable: true, description: "Null when the owner was deleted (see ownerDeleted)." })
  async owner(@Root() job: Job, @Ctx() ctx: Context): Promise<User | null> {
    const u = await ctx.loaders.user.load(job.ownerId);
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
    if (!Number.isInteger(count) || count < 1 || count > 100) throw new ValidationError("count", "must be from 1 to 100");
    const doc = await ctx.loaders.job.load(job.id);
    if (!doc || doc.paused) return [];
    // Fires whose runs are staged already come first; the schedule goes on after the cursor.
    const staged = (await ctx.loaders.stagedFires.load(job.id)).flatMap((r) => nextFires(doc.schedule, r.scheduledFor.getTime() - 1, 1, 0));
    const later = doc.status === "COMPLETED" ? [] : nextFires(doc.schedule, Math.max(doc.handledThrough.getTime(), ctx.services.clock()), count, doc.firedCount);
    return [...staged, ...later].slice(0, count).map((f) => ({ at: new Date(f.at), local: f.local, dst: f.dst ?? null }));
  }

  @FieldResolver(() => FireConnection, { description: "The fire ledger: one outcome per schedule slot, newest first." })
  async fires(
    @Root() job: Job,
    @Ctx() ctx: Context,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<FireConnection> {
    const size = pageSize(first);
    const docs = await ctx.services.mongo.c.fires
      .find({ jobId: job.id, ...afterDesc("slotAt", after) } as Filter<FireDoc>)
      .sort({ slotAt: -1, _id: -1 })
      .limit(size + 1)
      .toArray();
    return connection(docs, size, (d) => d.slotAt, toFire);
  }
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
  const size = pageSize(first);
  const runs = ctx.services.mongo.c.runs;
  const job = await ctx.loaders.job.load(jobId);
  if (job) visible(p, "job", jobId, job);
  // Runs outlive a deleted job: its id still names a history if the caller can see some run of
  // it. Otherwise the id is unknown (or someone else's): NOT_FOUND, whatever the page asked.
  else visible(p, "job", jobId, await runs.findOne({ jobId }, { projection: { ownerId: 1 } }));
  const q: Filter<RunDoc> = ownerScope<RunDoc>(p, { jobId, ...afterDesc("scheduledFor", after), ...(status ? statusFilter(status) : {}) });
  const docs = await runs
    .find(q, { projection: { spec: 0 } })
    .sort({ scheduledFor: -1, _id: -1 })
    .limit(size + 1)
    .toArray();
  return connection(docs, size, (d) => d.scheduledFor, toRun);
}
