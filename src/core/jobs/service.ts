/**
 * Jobs from the user's side, as one service: create and change them (create.ts), their life
 * after that (lifecycle.ts), runs on request (triggers.ts) and what users read (reads.ts). The
 * methods that act for a user take the principal and see only what it may see (auth/access.ts);
 * those the DAG engine uses on a DAG's timer job take a DagTimerActor instead (no user is faked).
 */
import type { Principal } from "../../auth/index.js";
import type { FireDoc, JobDoc, JobSpec, RunDoc } from "../../domain/index.js";
import type { Page, PageQuery } from "../../store/index.js";
import type { Lookups } from "../lookups.js";
import { JobEditor } from "./create.js";
import { JobLifecycle } from "./lifecycle.js";
import { JobReads, type ComingFire, type JobHealth, type JobListFilter, type SchedulePreview, type UpcomingFire } from "./reads.js";
import type { ScheduleInput } from "../../timing/index.js";
import { JobTriggers } from "./triggers.js";
import type { BackfillOutcome, JobActor, JobInput, JobPatch, JobServiceDeps, OwnerJobs, Submit } from "./types.js";
import { jobsKit } from "./writes.js";

export class JobService {
  private readonly editor: JobEditor;
  private readonly lifecycle: JobLifecycle;
  private readonly triggers: JobTriggers;
  private readonly reads: JobReads;

  constructor(deps: JobServiceDeps) {
    const kit = jobsKit(deps);
    this.editor = new JobEditor(kit);
    this.lifecycle = new JobLifecycle(kit);
    this.triggers = new JobTriggers(kit);
    this.reads = new JobReads(kit);
  }

  /** Loads a job the caller may see; a foreign job is reported as not found (no existence leak). */
  getFor(caller: Principal, jobId: string): Promise<JobDoc> {
    return this.reads.get(caller, jobId);
  }

  create(caller: JobActor, input: JobInput, opts: Submit = {}): Promise<JobDoc> {
    return this.editor.create(caller, input, opts);
  }

  update(caller: JobActor, jobId: string, patch: JobPatch): Promise<JobDoc> {
    return this.editor.update(caller, jobId, patch);
  }

  /** Takes back the runs staged for the job's coming fires and fires those slots again (see JobEditor.restage). */
  restage(caller: JobActor, jobId: string, why: string): Promise<JobDoc> {
    return this.editor.restage(caller, jobId, why);
  }

  /** Deletes the job; its waiting runs are cancelled, a running one finishes. */
  delete(caller: JobActor, jobId: string): Promise<JobDoc> {
    return this.lifecycle.delete(caller, jobId);
  }

  pause(caller: JobActor, jobId: string): Promise<JobDoc> {
    return this.lifecycle.pause(caller, jobId);
  }

  /** Fires missed while paused are recorded as SKIPPED_PAUSED, not run. */
  resume(caller: JobActor, jobId: string): Promise<JobDoc> {
    return this.lifecycle.resume(caller, jobId);
  }

  reschedule(caller: Principal, jobId: string, at: number): Promise<JobDoc> {
    return this.lifecycle.reschedule(caller, jobId, at);
  }

  /** Stops a deleted user's jobs (kept paused or deleted) and cancels their open runs. */
  retireOwner(ownerId: string, mode: OwnerJobs): Promise<{ kept: number; deleted: number; runsCancelled: number }> {
    return this.lifecycle.retireOwner(ownerId, mode);
  }

  /** Runs the job now, outside its schedule. */
  trigger(caller: Principal, jobId: string, opts: Submit = {}): Promise<RunDoc> {
    return this.triggers.trigger(caller, jobId, opts);
  }

  /** Creates the runs of the schedule's slots in a past range (existing ones are not repeated). */
  backfill(caller: Principal, jobId: string, from: number, to: number, opts: Submit = {}): Promise<BackfillOutcome> {
    return this.triggers.backfill(caller, jobId, from, to, opts);
  }

  list(caller: Principal, filter: JobListFilter | null | undefined, page: PageQuery): Promise<Page<JobDoc>> {
    return this.reads.list(caller, filter, page);
  }

  upcoming(caller: Principal, windowMs: number, page: PageQuery): Promise<Page<UpcomingFire>> {
    return this.reads.upcoming(caller, windowMs, page);
  }

  health(jobId: string, spec: Pick<JobSpec, "pool">): Promise<JobHealth> {
    return this.reads.health(jobId, spec);
  }

  fires(jobId: string, page: PageQuery): Promise<Page<FireDoc>> {
    return this.reads.fires(jobId, page);
  }

  nextFires(caller: Principal, jobId: string, count: number, lookups: Lookups): Promise<ComingFire[]> {
    return this.reads.nextFires(caller, jobId, count, lookups);
  }

  /** What a schedule would do as a new job's, checked as createJob checks it: its summary and first `count` fires. */
  previewSchedule(input: ScheduleInput, count: number): SchedulePreview {
    return this.reads.previewSchedule(input, count);
  }
}
