/** Creating a job and changing it: its fields checked, its spec validated against its pool, its timer armed. */
import type { JobDoc } from "../../domain/index.js";
import { changedSubject } from "../../domain/index.js";
import { PreconditionError, ScheduleKind, ValidationError } from "../../domain/index.js";
import { normalizeRetry } from "../../timing/index.js";
import { findJob } from "../../store/index.js";
import { findOwnedJob, insertJob } from "../../store/index.js";
import { isDuplicateKey, newId } from "../../store/index.js";
import { validateSpec, wrapSchedule } from "../spec.js";
import { specArtifact } from "../job-kinds.js";
import { firstFire, startSchedule, validateCatchup, validateDescription, validateName, validatePriority, validateTags } from "./fields.js";
import type { JobActor, JobInput, JobPatch, Submit } from "./types.js";
import { actorOwner, type JobsKit } from "./writes.js";
import { activeTraceparent } from "../../support/index.js";

export class JobEditor {
  constructor(private readonly kit: JobsKit) {}

  async create(caller: JobActor, input: JobInput, opts: Submit = {}): Promise<JobDoc> {
    if (opts.idempotencyKey == null) return this.createOnce(caller, input, opts.id ?? newId(), opts.armIf);
    return this.kit.idempotency.once(actorOwner(caller), opts.idempotencyKey, {
      operation: "createJob",
      input,
      run: (opId) => this.createOnce(caller, input, opId),
      save: (job) => ({ jobId: job._id }),
      load: async ({ jobId }) => {
        const job = await findJob(this.kit.deps.mongo, String(jobId));
        if (!job) throw new PreconditionError(`idempotency key "${opts.idempotencyKey}" created job ${String(jobId)}, which was deleted since`);
        return job;
      },
    });
  }

  /** Creates the job with id `id`; creating the same id again (a takeover after a crash) returns the stored job. */
  private async createOnce(caller: JobActor, input: JobInput, id: string, armIf?: () => Promise<boolean>): Promise<JobDoc> {
    const job = await this.newJob(caller, input, id);
    try {
      await insertJob(this.kit.deps.mongo, job);
    } catch (e) {
      if (!isDuplicateKey(e)) throw e;
      const same = await findOwnedJob(this.kit.deps.mongo, id, actorOwner(caller));
      if (same) return same;
      throw new PreconditionError(`you already have a job named "${job.name}"; names are unique per owner`);
    }
    if (job.nextFireAt && (armIf ? await armIf() : true)) await this.kit.writes.arm(job);
    this.kit.deps.log.info({ jobId: id, ownerId: actorOwner(caller), name: job.name }, "job created");
    await this.recurring(job);
    return job;
  }

  /** The document of a new job: every field checked, its first fire planned unless it starts paused. */
  private async newJob(caller: JobActor, input: JobInput, id: string): Promise<JobDoc> {
    const now = this.kit.deps.clock();
    const { schedule, handledThrough } = startSchedule(input.schedule, now);
    const at = new Date(now);
    const paused = input.paused ?? false;
    const job: JobDoc = {
      _id: id,
      ownerId: actorOwner(caller),
      name: validateName(input.name),
      description: validateDescription(input.description),
      tags: validateTags(input.tags),
      spec: validateSpec(input.spec, await this.kit.poolNodes.of(input.spec.pool), await this.artifact(caller, input.spec)),
      schedule,
      priority: validatePriority(input.priority),
      retry: wrapSchedule(() => normalizeRetry(input.retry ?? undefined), null),
      overlap: input.overlap ?? "ALLOW",
      misfire: input.misfire ?? "FIRE_ONCE",
      catchupWindowMs: validateCatchup(input.catchupWindow, this.kit.deps.defaultCatchupWindowMs),
      paused,
      pausedAt: paused ? at : null,
      status: paused ? "PAUSED" : "ACTIVE",
      nextSlotAt: null,
      nextFireAt: null,
      rescheduledTo: null,
      activeRunId: null,
      pendingRunId: null,
      lastSlotAt: null,
      handledThrough: new Date(handledThrough),
      firedCount: 0,
      version: 1,
      ...(input.dagId ? { dagId: input.dagId } : {}),
      ...activeTraceparent(),
      createdAt: at,
      updatedAt: at,
    };
    const first = firstFire(schedule, id, handledThrough, this.kit.random);
    if (!paused) {
      job.nextSlotAt = new Date(first.nextSlotAt);
      job.nextFireAt = new Date(first.nextFireAt);
    }
    return job;
  }

  async update(caller: JobActor, jobId: string, patch: JobPatch): Promise<JobDoc> {
    const current = await this.kit.writes.getFor(caller, jobId);
    const now = this.kit.deps.clock();
    const set = await this.patchedFields(caller, current, patch, now);
    const rearm = patch.schedule != null && this.newSchedule(current, patch, set, now);
    const updated = await this.kit.writes.update(current, set);
    if (rearm) await this.kit.writes.arm(updated);
    if (patch.schedule != null) await this.recurring(updated);
    // Runs staged for the coming fires were copied from the job as it was.
    if (patch.schedule != null) await this.kit.writes.unstage(updated, `${changedSubject(updated)}'s schedule changed`, "withdraw");
    else if (patch.spec != null || patch.priority != null || patch.retry != null || patch.overlap != null) {
      return this.kit.writes.unstage(updated, `${changedSubject(updated)} changed`, "rearm");
    }
    return updated;
  }

  /**
   * What the job's runs copy changed outside the job itself (a DAG's definition, which its timer
   * job's fires make DAG runs of): the runs staged for the coming fires are taken back and those
   * slots fired again under what it is now, as an update of the job's spec would.
   */
  async restage(caller: JobActor, jobId: string, why: string): Promise<JobDoc> {
    const job = await this.kit.writes.getFor(caller, jobId);
    return this.kit.writes.unstage(job, why, "rearm");
  }

  /** A job stored with a recurring schedule: the rules watching all of its owner's schedules watch it (a failure: the reconciler's). */
  private async recurring(job: JobDoc): Promise<void> {
    const watch = this.kit.deps.recurring;
    if (!watch || (job.schedule.kind !== ScheduleKind.INTERVAL && job.schedule.kind !== ScheduleKind.CRON)) return;
    await watch.watchJob(job).catch((e: unknown) => this.kit.deps.log.warn({ jobId: job._id, err: e }, "could not watch the job for SCHEDULE_SILENT rules; the reconciler will"));
  }

  /** The artifact a spec runs, looked up for the user it is for (a DAG's timer runs none: it never runs). */
  private async artifact(caller: JobActor, spec: JobInput["spec"]): Promise<Awaited<ReturnType<typeof specArtifact>>> {
    if ("timerOf" in caller) return null;
    return specArtifact(caller, spec, this.kit.deps.artifacts);
  }

  /** The checked fields of `patch` other than the schedule, as a `$set`. */
  private async patchedFields(caller: JobActor, current: JobDoc, patch: JobPatch, now: number): Promise<Partial<JobDoc>> {
    const set: Partial<JobDoc> = { updatedAt: new Date(now) };
    if (patch.name != null) set.name = validateName(patch.name);
    if (patch.description !== undefined) set.description = validateDescription(patch.description);
    if (patch.tags != null) set.tags = validateTags(patch.tags);
    if (patch.spec != null) set.spec = validateSpec(patch.spec, await this.kit.poolNodes.of(patch.spec.pool), await this.artifact(caller, patch.spec));
    if (patch.priority != null) set.priority = validatePriority(patch.priority);
    if (patch.retry != null) set.retry = wrapSchedule(() => normalizeRetry(patch.retry ?? undefined), null);
    if (patch.overlap != null) set.overlap = patch.overlap;
    if (patch.misfire != null) set.misfire = patch.misfire;
    if (patch.catchupWindow != null) set.catchupWindowMs = validateCatchup(patch.catchupWindow, current.catchupWindowMs);
    if (patch.paused != null && patch.paused !== current.paused) {
      throw new ValidationError("paused", "use pauseJob / resumeJob to pause or resume a job");
    }
    return set;
  }

  /** Adds the patch's new schedule to `set`; true when the job's timer must be re-armed (it is not paused). */
  private newSchedule(current: JobDoc, patch: JobPatch, set: Partial<JobDoc>, now: number): boolean {
    // A new schedule starts from now: slots of the old one are not replayed under the new one.
    const { schedule, handledThrough } = startSchedule(patch.schedule!, now);
    const first = firstFire(schedule, current._id, handledThrough, this.kit.random);
    // Its first fire continues the trace of this request (src/support/tracing.ts withFireSpan).
    Object.assign(set, { schedule, handledThrough: new Date(handledThrough), firedCount: 0, ...activeTraceparent() });
    if (current.paused) return false;
    Object.assign(set, {
      status: "ACTIVE",
      nextSlotAt: new Date(first.nextSlotAt),
      nextFireAt: new Date(first.nextFireAt),
    });
    return true;
  }
}
