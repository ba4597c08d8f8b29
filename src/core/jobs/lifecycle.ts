/** A job's life after it was created: pause, resume, reschedule, delete; and stopping a deleted user's jobs. */
import type { Principal } from "../../auth/index.js";
import type { JobDoc } from "../../domain/index.js";
import { changedSubject } from "../../domain/index.js";
import { ConcurrentChangeError, NotFoundError, PreconditionError, ValidationError } from "../../domain/index.js";
import { nextFire, slotsBetween, type Schedule } from "../../timing/index.js";
import { deleteJob, findJobIdsOfOwner, markOwnerDeleted } from "../../store/index.js";
import { findOpenRunIdsOfOwner, findWaitingRunIdsOfJob } from "../../store/index.js";
import type { JobActor, OwnerJobs } from "./types.js";
import { assertOwned, type JobsKit } from "./writes.js";

/** Most slots recorded one by one as SKIPPED_PAUSED when a long-paused job resumes. */
const MAX_PAUSED_SLOTS_RECORDED = 1_000;

export class JobLifecycle {
  constructor(private readonly kit: JobsKit) {}

  async delete(caller: JobActor, jobId: string): Promise<JobDoc> {
    const { deps, writes } = this.kit;
    const job = await writes.getFor(caller, jobId);
    if (!(await deleteJob(deps.mongo, jobId))) throw new NotFoundError("job", jobId);
    await writes.disarm(job);
    // Waiting runs die with their job; a RUNNING one finishes (its result is still recorded). A
    // DAG's timer job has no runs of its own: the runs under its id are the DAG's task runs, which
    // belong to their DAG runs (removing a DAG's schedule leaves its DAG runs in flight alone).
    for (const runId of job.dagId ? [] : await findWaitingRunIdsOfJob(deps.mongo, jobId)) {
      await deps.runs.cancelBySystem(runId, "job deleted").catch(() => undefined);
    }
    // Its SCHEDULE_SILENT watches end now rather than at their next check (up to silentFor later).
    await deps.recurring?.unwatchJob?.(job).catch((e: unknown) => deps.log.warn({ jobId, err: e }, "could not end the job's SCHEDULE_SILENT watches; each ends at its next check"));
    deps.log.info({ jobId, ownerId: job.ownerId }, "job deleted");
    return job;
  }

  async pause(caller: JobActor, jobId: string): Promise<JobDoc> {
    const { writes } = this.kit;
    const job = await writes.getFor(caller, jobId);
    // Paused already: a pause repeated (or the retry of one whose process died after writing the
    // job) still disarms the timer and takes back what is staged, so those runs do not start.
    if (job.paused) {
      await writes.disarm(job);
      return writes.unstage(job, `${changedSubject(job)} was paused`, "rollback");
    }
    const now = this.kit.deps.clock();
    const updated = await writes.update(job, {
      paused: true,
      pausedAt: new Date(now),
      status: "PAUSED",
      nextSlotAt: null,
      nextFireAt: null,
      updatedAt: new Date(now),
    });
    await writes.disarm(job);
    return writes.unstage(updated, `${changedSubject(job)} was paused`, "rollback");
  }

  /**
   * Resumes a paused job. Slots that fell while it was paused are recorded as SKIPPED_PAUSED
   * (never run late), and the schedule continues with the first slot after now.
   */
  async resume(caller: JobActor, jobId: string): Promise<JobDoc> {
    const { writes } = this.kit;
    let job = assertOwned(await writes.getFor(caller, jobId));
    if (!job.paused) return job;
    // Runs a scheduler staged with the job as it was before the pause (a pass that raced it) and
    // that no executor took: their slots are judged below like any other slot of the pause.
    job = await writes.unstage(job, `${changedSubject(job)} was paused`, "rollback", true);
    const now = this.kit.deps.clock();
    const from = job.handledThrough.getTime();
    const { slots, truncated } = slotsBetween(job.schedule, from, now, MAX_PAUSED_SLOTS_RECORDED, job.firedCount);
    await this.kit.ledger.record(
      job,
      slots.map((s, i) => ({
        slotAt: s.at,
        outcome: "SKIPPED_PAUSED" as const,
        reason: truncated && i === slots.length - 1 ? `paused; later slots up to resume not listed (over ${MAX_PAUSED_SLOTS_RECORDED})` : "paused",
      })),
      now,
    );
    const next = nextFire(job.schedule, jobId, Math.max(from, now), job.firedCount, this.kit.random);
    const updated = await writes.update(job, {
      paused: false,
      pausedAt: null,
      status: next ? "ACTIVE" : "COMPLETED",
      handledThrough: new Date(Math.max(from, now)),
      lastSlotAt: slots.length ? new Date(slots[slots.length - 1]!.at) : job.lastSlotAt,
      nextSlotAt: next ? new Date(next.nextSlotAt) : null,
      nextFireAt: next ? new Date(next.nextFireAt) : null,
      updatedAt: new Date(now),
    });
    if (updated.nextFireAt) await writes.arm(updated);
    return updated;
  }

  /**
   * Sets the next fire time. A one-off job moves to `at` (and becomes active again if it had run);
   * a recurring job fires at `at`, and slots of its schedule before `at` are recorded as MISSED
   * with the reason "rescheduled". A fire of `at` that comes late plans `at` and the schedule's
   * slots due after it under the job's misfire policy (timing/decide-fire.ts).
   */
  async reschedule(caller: Principal, jobId: string, at: number): Promise<JobDoc> {
    const { writes } = this.kit;
    const job = await writes.getFor(caller, jobId);
    const now = this.kit.deps.clock();
    if (!Number.isFinite(at)) throw new ValidationError("at", "must be a valid date-time");
    if (at < now - 1_000) {
      throw new ValidationError("at", `${new Date(at).toISOString()} is in the past; use triggerJob to run now`);
    }
    if (job.paused) throw new PreconditionError(`job ${jobId} is paused; resume it before rescheduling`);
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
    const updated = await writes.update(job, { ...set, updatedAt: new Date(now) });
    await writes.arm(updated);
    return writes.unstage(updated, `${changedSubject(job)} was rescheduled`, job.schedule.kind === "ONCE" ? "withdraw" : "rollback");
  }

  /**
   * Stops a deleted user's jobs: KEEP pauses each (its staged runs taken back) and marks it as
   * ownerless, DELETE removes it; then every open run of the user is cancelled (a RUNNING one is
   * killed by its executor). Idempotent, so a deletion interrupted midway can be run again.
   */
  async retireOwner(ownerId: string, mode: OwnerJobs): Promise<{ kept: number; deleted: number; runsCancelled: number }> {
    const { deps } = this.kit;
    const owner: Principal = { userId: ownerId, username: "(deleted user)", role: "USER" };
    let kept = 0;
    let deleted = 0;
    for (const jobId of await findJobIdsOfOwner(deps.mongo, ownerId)) {
      const done = await this.retireJob(owner, jobId, mode);
      if (done === "DELETE") deleted++;
      if (done === "KEEP") kept++;
    }
    let runsCancelled = 0;
    for (const runId of await findOpenRunIdsOfOwner(deps.mongo, ownerId)) {
      const done = await deps.runs.cancelBySystem(runId, "owner deleted").catch(() => null);
      if (done) runsCancelled++;
    }
    return { kept, deleted, runsCancelled };
  }

  /** Deletes or keeps one job of a deleted owner; null when it vanished meanwhile. */
  private async retireJob(owner: Principal, jobId: string, mode: OwnerJobs): Promise<OwnerJobs | null> {
    // A concurrent edit (version conflict) is retried; the job may also vanish meanwhile.
    for (let attempt = 0; ; attempt++) {
      try {
        if (mode === "DELETE") {
          await this.delete(owner, jobId);
        } else {
          await this.pause(owner, jobId);
          await markOwnerDeleted(this.kit.deps.mongo, jobId, new Date(this.kit.deps.clock()));
        }
        return mode;
      } catch (e) {
        if (e instanceof NotFoundError) return null;
        if (!(e instanceof ConcurrentChangeError) || attempt >= 5) throw e;
      }
    }
  }
}
