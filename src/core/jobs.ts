/**
 * Job lifecycle from the user's side: create, update, pause, resume, trigger, reschedule, delete.
 * Each change is one conditional update of the job document, then the wheel timer is re-armed.
 *
 * Crash window: the job document is written before its timer is armed. If the process dies in
 * between, the job has a `nextFireAt` and no timer; the scheduler's reconcile pass (which rebuilds
 * the wheel from `jobs.nextFireAt`) re-arms it. Mongo is the source of truth.
 */
import type { UpdateFilter } from "mongodb";
import { ConflictError, NotFoundError, ValidationError } from "../domain/errors.js";
import type { Logger } from "../log.js";
import { shardOf, type Clock, type SharedState } from "../scheduler/ports.js";
import {
  describeSchedule,
  dueAt,
  nextSlot,
  normalizeRetry,
  normalizeSchedule,
  parsePositiveDuration,
  slotsBetween,
  type MisfirePolicy,
  type OverlapPolicy,
  type RetryInput,
  type Schedule,
  type ScheduleInput,
} from "../scheduler/timing/index.js";
import { isDuplicateKey, newId, type Mongo } from "../store/mongo.js";
import type { JobDoc, RunDoc } from "../domain/documents.js";
import { validateSpec, wrapSchedule, type JobSpecInput, type PoolNode } from "./spec.js";
import type { Principal } from "../auth/tokens.js";
import { visible } from "../auth/access.js";
import { FireLedger } from "./fires.js";
import { IdempotencyService, type IdempotencyOptions } from "./idempotency.js";
import { RunService } from "./runs.js";
import { jobTimerId } from "../domain/timers.js";
import { manualFireKey } from "../domain/fire-keys.js";
import { RunStatus } from "../domain/lifecycle.js";
import { DEFAULT_STAGE_AHEAD_MS, timerDueAt } from "../scheduler/staging.js";


export interface JobInput {
  name: string;
  description?: string | null;
  tags?: string[] | null;
  schedule: ScheduleInput;
  spec: JobSpecInput;
  priority?: number | null;
  retry?: RetryInput | null;
  overlap?: OverlapPolicy | null;
  misfire?: MisfirePolicy | null;
  catchupWindow?: string | null;
  paused?: boolean | null;
}

export type { JobSpecInput };

export type JobPatch = Partial<JobInput>;

/** What happens to a deleted user's jobs: kept paused (owner marked deleted) or removed. */
export type OwnerJobs = "KEEP" | "DELETE";

/** Options of a submission: the same idempotency key within 24 h returns the first result. */
export interface Submit {
  idempotencyKey?: string | null;
}

export interface BackfillOutcome {
  requested: number;
  created: RunDoc[];
  existing: number;
}

/** Most slots recorded one by one as SKIPPED_PAUSED when a long-paused job resumes. */
const MAX_PAUSED_SLOTS_RECORDED = 1_000;
/** Most slots one backfillJob call may create. */
export const MAX_BACKFILL = 1_000;
const MAX_CATCHUP_WINDOW_MS = 7 * 24 * 3600 * 1000;
const NAME_RE = /^[^\u0000-\u001f]{1,128}$/;

export interface JobServiceDeps {
  mongo: Mongo;
  state: SharedState;
  runs: RunService;
  clock: Clock;
  log: Logger;
  defaultCatchupWindowMs: number;
  /** The schedulers' stage-ahead window (SchedulerOptions.stageAheadMs): timers are armed that much early. @default 10 s */
  stageAheadMs?: number;
  random?: () => number;
  idempotency?: IdempotencyOptions;
}

export class JobService {
  private readonly ledger: FireLedger;
  private readonly random: () => number;
  private readonly idempotency: IdempotencyService;

  constructor(private readonly deps: JobServiceDeps) {
    this.ledger = new FireLedger(deps.mongo);
    this.random = deps.random ?? Math.random;
    this.idempotency = new IdempotencyService(deps, deps.idempotency);
  }

  private get jobs() {
    return this.deps.mongo.c.jobs;
  }

  /** Loads a job the caller may see; a foreign job is reported as not found (no existence leak). */
  async getFor(caller: Principal, jobId: string): Promise<JobDoc> {
    return visible(caller, "job", jobId, await this.jobs.findOne({ _id: jobId }));
  }

  /** Each pool's online nodes as last read, and when (see poolNodes). */
  private readonly poolNodeCache = new Map<string, { at: number; nodes: Promise<PoolNode[]> }>();

  /**
   * The online nodes of a pool, for its run defaults, maximums and network modes
   * (core/resources.ts). Read at most once per POOL_NODES_TTL_MS per pool: a burst of submissions
   * costs no query each, and a node that just came online is seen within a second or two.
   */
  private poolNodes(pool: string | null | undefined): Promise<PoolNode[]> {
    const name = pool ?? "default";
    const now = this.deps.clock();
    const hit = this.poolNodeCache.get(name);
    if (hit && now - hit.at < POOL_NODES_TTL_MS) return hit.nodes;
    const nodes = this.deps.mongo.c.nodes
      .find({ pools: name, status: "ONLINE" }, { projection: { name: 1, maxRun: 1, defaultRun: 1, isolation: 1 }, limit: 1_000 })
      .toArray();
    if (this.poolNodeCache.size > 1_000) this.poolNodeCache.clear();
    this.poolNodeCache.set(name, { at: now, nodes });
    nodes.catch(() => this.poolNodeCache.delete(name));
    return nodes;
  }

  async create(caller: Principal, input: JobInput, opts: Submit = {}): Promise<JobDoc> {
    if (!opts.idempotencyKey) return this.createOnce(caller, input, newId());
    return this.idempotency.once(caller.userId, opts.idempotencyKey, {
      operation: "createJob",
      input,
      run: (opId) => this.createOnce(caller, input, opId),
      save: (job) => ({ jobId: job._id }),
      load: async ({ jobId }) => {
        const job = await this.jobs.findOne({ _id: String(jobId) });
        if (!job) throw new ConflictError(`idempotency key "${opts.idempotencyKey}" created job ${String(jobId)}, which was deleted since`);
        return job;
      },
    });
  }

  /** Creates the job with id `id`; creating the same id again (a takeover after a crash) returns the stored job. */
  private async createOnce(caller: Principal, input: JobInput, id: string): Promise<JobDoc> {
    const now = this.deps.clock();
    const schedule = wrapSchedule(() => normalizeSchedule(input.schedule, now));
    const at = new Date(now);
    const paused = input.paused ?? false;
    const job: JobDoc = {
      _id: id,
      ownerId: caller.userId,
      name: validateName(input.name),
      description: validateDescription(input.description),
      tags: validateTags(input.tags),
      spec: validateSpec(input.spec, await this.poolNodes(input.spec.pool)),
      schedule,
      priority: validatePriority(input.priority),
      retry: wrapSchedule(() => normalizeRetry(input.retry ?? undefined), null),
      overlap: input.overlap ?? "ALLOW",
      misfire: input.misfire ?? "FIRE_ONCE",
      catchupWindowMs: validateCatchup(input.catchupWindow, this.deps.defaultCatchupWindowMs),
      paused,
      pausedAt: paused ? at : null,
      status: paused ? "PAUSED" : "ACTIVE",
      nextSlotAt: null,
      nextFireAt: null,
      rescheduledTo: null,
      activeRunId: null,
      pendingRunId: null,
      lastSlotAt: null,
      handledThrough: new Date(firstCursor(schedule, now)),
      firedCount: 0,
      version: 1,
      createdAt: at,
      updatedAt: at,
    };
    const first = nextSlot(schedule, job.handledThrough.getTime(), 0);
    if (!first) {
      throw new ValidationError("schedule", "has no fire time after now (check at, endAt and maxFires)");
    }
    if (!paused) {
      job.nextSlotAt = new Date(first.at);
      job.nextFireAt = new Date(dueAt(schedule, id, first, this.random));
    }
    try {
      await this.jobs.insertOne(job);
    } catch (e) {
      if (!isDuplicateKey(e)) throw e;
      const same = await this.jobs.findOne({ _id: id, ownerId: caller.userId });
      if (same) return same;
      throw new ConflictError(`you already have a job named "${job.name}"; names are unique per owner`);
    }
    if (job.nextFireAt) await this.arm(job);
    this.deps.log.info({ jobId: id, ownerId: caller.userId, name: job.name }, "job created");
    return job;
  }

  async update(caller: Principal, jobId: string, patch: JobPatch): Promise<JobDoc> {
    const current = await this.getFor(caller, jobId);
    const now = this.deps.clock();
    const set: Partial<JobDoc> = { updatedAt: new Date(now) };
    if (patch.name != null) set.name = validateName(patch.name);
    if (patch.description !== undefined) set.description = validateDescription(patch.description);
    if (patch.tags != null) set.tags = validateTags(patch.tags);
    if (patch.spec != null) set.spec = validateSpec(patch.spec, await this.poolNodes(patch.spec.pool));
    if (patch.priority != null) set.priority = validatePriority(patch.priority);
    if (patch.retry != null) set.retry = wrapSchedule(() => normalizeRetry(patch.retry ?? undefined), null);
    if (patch.overlap != null) set.overlap = patch.overlap;
    if (patch.misfire != null) set.misfire = patch.misfire;
    if (patch.catchupWindow != null) set.catchupWindowMs = validateCatchup(patch.catchupWindow, current.catchupWindowMs);
    if (patch.paused != null && patch.paused !== current.paused) {
      throw new ValidationError("paused", "use pauseJob / resumeJob to pause or resume a job");
    }
    let rearm = false;
    if (patch.schedule != null) {
      const schedule = wrapSchedule(() => normalizeSchedule(patch.schedule!, now));
      // A new schedule starts from now: slots of the old one are not replayed under the new one.
      const handledThrough = firstCursor(schedule, now);
      const first = nextSlot(schedule, handledThrough, 0);
      if (!first) throw new ValidationError("schedule", "has no fire time after now (check at, endAt and maxFires)");
      Object.assign(set, { schedule, handledThrough: new Date(handledThrough), firedCount: 0 });
      if (!current.paused) {
        Object.assign(set, {
          status: "ACTIVE",
          nextSlotAt: new Date(first.at),
          nextFireAt: new Date(dueAt(schedule, jobId, first, this.random)),
        });
        rearm = true;
      }
    }
    const updated = await this.conditionalUpdate(current, set);
    if (rearm) await this.arm(updated);
    // Runs staged for the coming fires were copied from the job as it was.
    if (patch.schedule != null) await this.unstage(updated, "the job's schedule changed", "withdraw");
    else if (patch.spec != null || patch.priority != null || patch.retry != null || patch.overlap != null) {
      return this.unstage(updated, "the job changed", "rearm");
    }
    return updated;
  }

  async delete(caller: Principal, jobId: string): Promise<JobDoc> {
    const job = await this.getFor(caller, jobId);
    const res = await this.jobs.deleteOne({ _id: jobId });
    if (res.deletedCount !== 1) throw new NotFoundError("job", jobId);
    await this.disarm(job);
    // Waiting runs die with their job; a RUNNING one finishes (its result is still recorded).
    const waiting = await this.deps.mongo.c.runs
      .find({ jobId, status: { $in: [RunStatus.PENDING, RunStatus.QUEUED, RunStatus.RETRY_SCHEDULED] } }, { projection: { _id: 1 } })
      .toArray();
    for (const r of waiting) {
      await this.deps.runs.cancel(r._id, "job deleted").catch(() => undefined);
    }
    this.deps.log.info({ jobId, ownerId: job.ownerId }, "job deleted");
    return job;
  }

  async pause(caller: Principal, jobId: string): Promise<JobDoc> {
    const job = await this.getFor(caller, jobId);
    if (job.paused) return job;
    const now = this.deps.clock();
    const updated = await this.conditionalUpdate(job, {
      paused: true,
      pausedAt: new Date(now),
      status: "PAUSED",
      nextSlotAt: null,
      nextFireAt: null,
      updatedAt: new Date(now),
    });
    await this.disarm(job);
    return this.unstage(updated, "the job was paused", "rollback");
  }

  /**
   * Resumes a paused job. Slots that fell while it was paused are recorded as SKIPPED_PAUSED
   * (never run late), and the schedule continues with the first slot after now.
   */
  async resume(caller: Principal, jobId: string): Promise<JobDoc> {
    let job = assertOwned(await this.getFor(caller, jobId));
    if (!job.paused) return job;
    // Runs a scheduler staged with the job as it was before the pause (a pass that raced it) and
    // that no executor took: their slots are judged below like any other slot of the pause.
    job = await this.unstage(job, "the job was paused", "rollback", true);
    const now = this.deps.clock();
    const from = job.handledThrough.getTime();
    const { slots, truncated } = slotsBetween(job.schedule, from, now, MAX_PAUSED_SLOTS_RECORDED, job.firedCount);
    await this.ledger.record(
      job,
      slots.map((s, i) => ({
        slotAt: s.at,
        outcome: "SKIPPED_PAUSED" as const,
        reason: truncated && i === slots.length - 1 ? `paused; later slots up to resume not listed (over ${MAX_PAUSED_SLOTS_RECORDED})` : "paused",
      })),
      now,
    );
    const next = nextSlot(job.schedule, Math.max(from, now), job.firedCount);
    const updated = await this.conditionalUpdate(job, {
      paused: false,
      pausedAt: null,
      status: next ? "ACTIVE" : "COMPLETED",
      handledThrough: new Date(Math.max(from, now)),
      lastSlotAt: slots.length ? new Date(slots[slots.length - 1]!.at) : job.lastSlotAt,
      nextSlotAt: next ? new Date(next.at) : null,
      nextFireAt: next ? new Date(dueAt(job.schedule, jobId, next, this.random)) : null,
      updatedAt: new Date(now),
    });
    if (updated.nextFireAt) await this.arm(updated);
    return updated;
  }

  /** Runs the job now, outside its schedule (a paused job can be triggered too). */
  async trigger(caller: Principal, jobId: string, opts: Submit = {}): Promise<RunDoc> {
    if (!opts.idempotencyKey) return this.triggerOnce(caller, jobId, newId());
    return this.idempotency.once(caller.userId, opts.idempotencyKey, {
      operation: "triggerJob",
      input: { jobId },
      run: (opId) => this.triggerOnce(caller, jobId, opId),
      save: (run) => ({ runId: run._id }),
      load: async ({ runId }) => {
        const run = await this.deps.runs.get(String(runId));
        if (!run) throw new ConflictError(`idempotency key "${opts.idempotencyKey}" made run ${String(runId)}, which no longer exists`);
        return run;
      },
    });
  }

  /** The manual fire `opId` of the job: its fireKey makes a repeat of the same operation a no-op. */
  private async triggerOnce(caller: Principal, jobId: string, opId: string): Promise<RunDoc> {
    const job = assertOwned(await this.getFor(caller, jobId));
    const now = this.deps.clock();
    const { run, skipped } = await this.deps.runs.materialize(job, {
      scheduledFor: now,
      trigger: "MANUAL",
      fireKey: manualFireKey(jobId, opId),
      reason: `triggered by ${caller.username}`,
    });
    if (!run) throw new ConflictError(`not triggered: ${skipped}`);
    return run;
  }

  /**
   * Sets the next fire time. A one-off job moves to `at` (and becomes active again if it had run);
   * a recurring job fires at `at`, and slots of its schedule before `at` are recorded as MISSED
   * with the reason "rescheduled".
   */
  async reschedule(caller: Principal, jobId: string, at: number): Promise<JobDoc> {
    const job = await this.getFor(caller, jobId);
    const now = this.deps.clock();
    if (!Number.isFinite(at)) throw new ValidationError("at", "must be a valid date-time");
    if (at < now - 1_000) {
      throw new ValidationError("at", `${new Date(at).toISOString()} is in the past; use triggerJob to run now`);
    }
    if (job.paused) throw new ConflictError(`job ${jobId} is paused; resume it before rescheduling`);
    let set: Partial<JobDoc>;
    if (job.schedule.kind === "ONCE") {
      const schedule: Schedule = { ...job.schedule, atMs: at };
      set = {
        schedule,
        status: "ACTIVE",
        firedCount: 0,
        handledThrough: new Date(Math.min(at, now) - 1),
        nextSlotAt: new Date(at),
        nextFireAt: new Date(at),
      };
    } else {
      set = { status: "ACTIVE", nextSlotAt: new Date(at), nextFireAt: new Date(at), rescheduledTo: new Date(at) };
    }
    const updated = await this.conditionalUpdate(job, { ...set, updatedAt: new Date(now) });
    await this.arm(updated);
    return this.unstage(updated, "the job was rescheduled", job.schedule.kind === "ONCE" ? "withdraw" : "rollback");
  }

  /**
   * Creates the runs for the slots of a past range `[from, to]`, as if they had fired (trigger
   * BACKFILL). Slots that already have a run (same fireKey) are not run again. Bounded: a range
   * with more than {@link MAX_BACKFILL} slots is refused. Backfill runs ignore the overlap policy
   * (they are an explicit request for exactly these runs); slots without a ledger outcome get FIRED.
   */
  async backfill(caller: Principal, jobId: string, from: number, to: number, opts: Submit = {}): Promise<BackfillOutcome> {
    if (!opts.idempotencyKey) return this.backfillOnce(caller, jobId, from, to);
    return this.idempotency.once(caller.userId, opts.idempotencyKey, {
      operation: "backfillJob",
      input: { jobId, from, to },
      // Backfill runs are keyed by slot (fireKey), so running it again makes nothing new.
      run: () => this.backfillOnce(caller, jobId, from, to),
      save: (r) => ({ requested: r.requested, existing: r.existing, runIds: r.created.map((x) => x._id) }),
      load: async (saved) => {
        const ids = (saved.runIds as string[]) ?? [];
        const runs = await this.deps.mongo.c.runs.find({ _id: { $in: ids } }).toArray();
        const byId = new Map(runs.map((r) => [r._id, r]));
        return { requested: Number(saved.requested), existing: Number(saved.existing), created: ids.flatMap((id) => byId.get(id) ?? []) };
      },
    });
  }

  private async backfillOnce(caller: Principal, jobId: string, from: number, to: number): Promise<BackfillOutcome> {
    const job = assertOwned(await this.getFor(caller, jobId));
    const now = this.deps.clock();
    if (!(from <= to)) throw new ValidationError("to", "must not be before from");
    if (to > now) throw new ValidationError("to", `${new Date(to).toISOString()} is in the future; backfill covers past slots only`);
    const { slots, truncated } = slotsBetween(job.schedule, from - 1, to, MAX_BACKFILL, 0);
    if (truncated) {
      throw new ValidationError("from", `the range holds more than ${MAX_BACKFILL} slots; backfill at most ${MAX_BACKFILL} at a time`);
    }
    if (slots.length === 0) {
      throw new ValidationError(
        "from",
        `the range holds no slot of the schedule (${describeSchedule(job.schedule)}; no slot before ${new Date(job.schedule.startAt).toISOString()})`,
      );
    }
    const created: RunDoc[] = [];
    let existing = 0;
    for (const slot of slots) {
      const { run, created: isNew } = await this.deps.runs.materialize(job, {
        scheduledFor: slot.at,
        trigger: "BACKFILL",
        reason: `backfill by ${caller.username}`,
        ignoreOverlap: true,
      });
      if (isNew && run) created.push(run);
      else existing++;
    }
    await this.ledger.record(
      job,
      created.map((r) => ({ slotAt: r.scheduledFor.getTime(), outcome: "FIRED" as const, runId: r._id, latenessMs: now - r.scheduledFor.getTime(), reason: "backfill" })),
      now,
    );
    this.deps.log.info({ jobId, slots: slots.length, created: created.length }, "backfill");
    return { requested: slots.length, created, existing };
  }

  /**
   * Stops a deleted user's jobs: KEEP pauses each (its staged runs taken back) and marks it as
   * ownerless, DELETE removes it; then every open run of the user is cancelled (a RUNNING one is
   * killed by its executor). Idempotent, so a deletion interrupted midway can be run again.
   */
  async retireOwner(ownerId: string, mode: OwnerJobs): Promise<{ kept: number; deleted: number; runsCancelled: number }> {
    const owner: Principal = { userId: ownerId, username: "(deleted user)", role: "USER" };
    const ids = (await this.jobs.find({ ownerId }, { projection: { _id: 1 } }).toArray()).map((j) => j._id);
    let kept = 0;
    let deleted = 0;
    for (const jobId of ids) {
      // A concurrent edit (version conflict) is retried; the job may also vanish meanwhile.
      for (let attempt = 0; ; attempt++) {
        try {
          if (mode === "DELETE") {
            await this.delete(owner, jobId);
            deleted++;
          } else {
            await this.pause(owner, jobId);
            await this.jobs.updateOne({ _id: jobId }, { $set: { ownerDeleted: true, updatedAt: new Date(this.deps.clock()) }, $inc: { version: 1 } });
            kept++;
          }
          break;
        } catch (e) {
          if (e instanceof NotFoundError) break;
          if (!(e instanceof ConflictError) || attempt >= 5) throw e;
        }
      }
    }
    const open = await this.deps.mongo.c.runs
      .find({ ownerId, status: { $in: [RunStatus.PENDING, RunStatus.QUEUED, RunStatus.RETRY_SCHEDULED, RunStatus.RUNNING] } }, { projection: { _id: 1 } })
      .toArray();
    let runsCancelled = 0;
    for (const r of open) {
      const done = await this.deps.runs.cancel(r._id, "owner deleted").catch(() => null);
      if (done) runsCancelled++;
    }
    return { kept, deleted, runsCancelled };
  }

  private async conditionalUpdate(current: JobDoc, set: Partial<JobDoc>): Promise<JobDoc> {
    const updated = await this.jobs.findOneAndUpdate(
      { _id: current._id, version: current.version },
      { $set: set, $inc: { version: 1 } },
      { returnDocument: "after" },
    );
    if (!updated) {
      throw new ConflictError(`job ${current._id} was changed by someone else meanwhile; read it again and retry`);
    }
    return updated;
  }

  private async arm(job: JobDoc): Promise<void> {
    const { wheel } = this.deps.state;
    const at = timerDueAt(job, job.nextFireAt!.getTime(), this.deps.stageAheadMs ?? DEFAULT_STAGE_AHEAD_MS);
    await wheel.arm(shardOf(job._id, wheel.shardCount), jobTimerId(job._id), at);
  }

  /**
   * Takes back the runs the scheduler staged for the job's coming fires (they were copied from the
   * job as it was; see RunService.withdrawStaged). Then, unless the change reset the job's cursor
   * itself (`withdraw`), the cursor moves back before the first of them so those slots are judged
   * again: recorded as paused or rescheduled on resume (`rollback`), or fired under the job as it
   * is now (`rearm`). Returns the job as stored afterwards.
   */
  private async unstage(job: JobDoc, why: string, mode: "withdraw" | "rollback" | "rearm", includeDue = false): Promise<JobDoc> {
    const withdrawn = await this.deps.runs.withdrawStaged(job._id, why, { includeDue });
    if (withdrawn.length === 0 || mode === "withdraw") return job;
    const first = withdrawn.reduce((a, b) => (a.scheduledFor <= b.scheduledFor ? a : b));
    // Only runs the cursor already counts give their count back: a pass that staged runs and then
    // lost the race with this change never advanced the cursor over them.
    const counted = withdrawn.filter((r) => r.scheduledFor.getTime() <= job.handledThrough.getTime()).length;
    const update: UpdateFilter<JobDoc> = {
      $min: { handledThrough: new Date(first.scheduledFor.getTime() - 1) },
      $inc: { firedCount: -counted, version: 1 },
    };
    if (mode === "rearm") update.$set = { status: "ACTIVE", nextSlotAt: first.scheduledFor, nextFireAt: first.notBefore ?? first.scheduledFor };
    const after = await this.jobs.findOneAndUpdate({ _id: job._id }, update, { returnDocument: "after" });
    if (!after) return job;
    if (mode === "rearm" && !after.paused) await this.arm(after);
    this.deps.log.info({ jobId: job._id, runs: withdrawn.length, why }, "took back runs staged ahead of their fire time");
    return after;
  }

  private async disarm(job: JobDoc): Promise<void> {
    const { wheel } = this.deps.state;
    await wheel.disarm(shardOf(job._id, wheel.shardCount), jobTimerId(job._id));
  }
}

/** A job whose owner was deleted is kept for reference only: it cannot fire again. */
function assertOwned(job: JobDoc): JobDoc {
  if (job.ownerDeleted) throw new ConflictError(`job ${job._id} belonged to a deleted user and is kept for reference only; it cannot run again`);
  return job;
}

/**
 * The planning cursor of a new schedule: slots after it are still to come. A one-off whose time is
 * already past runs now (it is due), so its cursor sits just before its slot.
 */
function firstCursor(schedule: Schedule, now: number): number {
  if (schedule.kind === "ONCE" && schedule.atMs !== null && schedule.atMs !== undefined) {
    return Math.min(now, schedule.atMs) - 1;
  }
  return now - 1;
}


function validateName(name: string): string {
  const trimmed = name.trim();
  if (!NAME_RE.test(trimmed)) throw new ValidationError("name", "must be 1–128 characters with no control characters");
  return trimmed;
}

function validateDescription(d: string | null | undefined): string | null {
  if (d == null || d === "") return null;
  if (d.length > 4_096) throw new ValidationError("description", "at most 4096 characters");
  return d;
}

function validateTags(tags: string[] | null | undefined): string[] {
  if (!tags) return [];
  if (tags.length > 32) throw new ValidationError("tags", "at most 32 tags");
  for (const t of tags) {
    if (!/^[A-Za-z0-9_.:/=-]{1,64}$/.test(t)) {
      throw new ValidationError("tags", `"${t}" is not a valid tag: 1–64 characters of letters, digits and _ . : / = -`);
    }
  }
  return [...new Set(tags)];
}

function validatePriority(p: number | null | undefined): number {
  if (p == null) return 5;
  if (!Number.isInteger(p) || p < 0 || p > 9) throw new ValidationError("priority", `must be a whole number from 0 to 9 (got ${p})`);
  return p;
}

function validateCatchup(raw: string | null | undefined, dflt: number): number {
  if (raw == null) return dflt;
  const ms = wrapSchedule(() => parsePositiveDuration(raw, "catchupWindow"), "job");
  if (ms > MAX_CATCHUP_WINDOW_MS) throw new ValidationError("catchupWindow", "at most P7D");
  return ms;
}

/** How long JobService reuses a pool's list of online nodes. */
const POOL_NODES_TTL_MS = 2_000;
