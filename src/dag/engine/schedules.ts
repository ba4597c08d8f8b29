/**
 * Scheduled DAGs (docs/dags.md, "Schedules"; docs/decisions.md). A DAG's schedule is carried by a
 * hidden *timer job* with the DAG's id and `dagId` set, so the job scheduling machinery fires it
 * exactly as it fires a job: every schedule kind, jitter and spread, the misfire policy, the fire
 * ledger (one outcome per slot), pause and resume, the wheel's crash safety. Only what a fire makes
 * differs: core's Materializer hands a timer job's fire to {@link DagSchedules.fire}, which makes
 * the DAG run (once per fire key) under the timer job's overlap lock, so the overlap policies hold
 * between DAG runs; under ALLOW the fire comes ahead of the slot and the DAG run is staged
 * (its first tasks wait until the slot's time), taken back if the DAG changes first (staged.ts). The lock is given back when the DAG run ends; a DAG run held behind it
 * (QUEUE_ONE) then starts. Users never see the timer job: it is NOT_FOUND as a job and left out
 * of job listings; they change it through the DAG.
 */
import type { DagFired, DagFireLock, DagTimerActor, JobService, LockRequest, LockSubject, RunService } from "../../core/index.js";
import type { DagDoc, DagRunDoc, JobDoc, RunTrigger } from "../../domain/index.js";
import { DagRunStatus, NotFoundError, backlogSkipReason, judgeStaleHolds } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import type { Logger } from "../../support/index.js";
import type { ScheduleInput } from "../../timing/index.js";
import {
  dagExists,
  findDagRun,
  findDagRunByFireKey,
  findHeldBehind,
  findHeldDagRuns,
  findDagHead,
  findJob,
  findLockedDagTimers,
  newId,
  setDagRunAtVersion,
  type Mongo,
} from "../../store/index.js";
import type { DagAdvancer } from "./advance.js";
import type { DagPatch } from "./definition.js";
import type { DagDefinitions } from "./definitions.js";
import { insertOnce, newDagRun } from "./runs.js";

export interface DagSchedulesDeps {
  mongo: Mongo;
  /** DAGs read with their definitions by version (a fire of a 1,000-task DAG reads no task spec). */
  definitions: DagDefinitions;
  jobs: JobService;
  runs: RunService;
  clock: Clock;
  log: Logger;
  advancer: DagAdvancer;
  sweepAfterMs: number;
  /** Cancels a DAG run (REPLACE displaced it). */
  cancel: (dagRunId: string, reason: string) => Promise<void>;
}

/** A DAG run's hold on its DAG's overlap lock (see {@link DagSchedules.relock}, {@link DagSchedules.lockTrigger}). */
export interface DagRunLock {
  /** The timer job whose lock the DAG run holds, or null: it holds none. */
  lockJobId: string | null;
  /** QUEUE_ONE: the DAG run waits behind the holder (written `held`, started when the holder ends). */
  held: boolean;
  /** REPLACE: the DAG run it displaces, to cancel once it is written. */
  replaced: string | null;
}

const NO_LOCK: DagRunLock = { lockJobId: null, held: false, replaced: null };

/** The timer job's name: unique per owner, and no user job can be named so (a DAG id). */
const timerName = (dagId: string) => `dag:${dagId}`;

/** The DAG engine acting on a DAG's timer job: as the DAG, for its owner, not as a user (core/jobs JobActor). */
function timerCaller(dag: Pick<DagDoc, "_id" | "ownerId">): DagTimerActor {
  return { timerOf: dag._id, ownerId: dag.ownerId };
}

export class DagSchedules {
  /** A DAG's lock (its timer job's), held by its DAG runs: core's overlap machinery words and hands it off so. */
  private readonly lock: LockSubject = { kind: "DAG", runNoun: "DAG run", startPassed: (id) => this.startPassed(id) };

  constructor(private readonly deps: DagSchedulesDeps) {}

  /** A new scheduled DAG: its timer job (id = the DAG's id), armed unless the DAG starts paused. */
  async attach(dag: DagDoc, input: DagPatch & { schedule: ScheduleInput }): Promise<void> {
    await this.deps.jobs.create(
      timerCaller(dag),
      {
        name: timerName(dag._id),
        description: `The schedule of DAG ${dag.name}`,
        schedule: input.schedule,
        // Never run: a fire of this job makes a DAG run instead (see fire()).
        spec: { kind: "COMMAND", argv: ["true"] },
        overlap: dag.overlap,
        misfire: dag.misfire,
        catchupWindow: input.catchupWindow ?? null,
        paused: dag.paused,
        dagId: dag._id,
      },
      // Not armed if a pauseDag landed while it was being made: no slot of it is staged or fired.
      { id: dag._id, armIf: async () => !(await findDagHead(this.deps.mongo, dag._id))?.paused },
    );
    // A pauseDag or resumeDag that landed while the timer was being made found no timer to change
    // (it sets the DAG's flag first, then the timer's): the timer follows the flag as it is now, so
    // a DAG shown paused never fires (and one shown resumed is not left paused).
    const now = await findDagHead(this.deps.mongo, dag._id);
    if (now && now.paused !== dag.paused) {
      if (now.paused) await this.deps.jobs.pause(timerCaller(dag), dag._id);
      else await this.deps.jobs.resume(timerCaller(dag), dag._id);
    }
  }

  /**
   * The DAG changed: its timer follows (a new schedule, misfire or overlap policy); made if the DAG
   * got its first schedule, removed with its schedule (`clearSchedule`, see {@link detach}).
   */
  async sync(dag: DagDoc, patch: DagPatch): Promise<void> {
    if (patch.clearSchedule) return this.detach(dag);
    const timer = await findJob(this.deps.mongo, dag._id);
    if (!timer) {
      if (patch.schedule) await this.attach(dag, { ...patch, schedule: patch.schedule });
      return;
    }
    if (patch.schedule != null || patch.misfire != null || patch.overlap != null || patch.catchupWindow != null) {
      await this.deps.jobs.update(timerCaller(dag), dag._id, {
        ...(patch.schedule ? { schedule: patch.schedule } : {}),
        ...(patch.misfire ? { misfire: patch.misfire } : {}),
        ...(patch.overlap ? { overlap: patch.overlap } : {}),
        ...(patch.catchupWindow ? { catchupWindow: patch.catchupWindow } : {}),
      });
    }
    // DAG runs staged for the coming slots run the version they were made with: taken back, and
    // those slots fired again at the new version (StagedDagRuns).
    if (patch.tasks != null || patch.maxParallel !== undefined || patch.failFast != null || patch.params !== undefined) {
      await this.deps.jobs.restage(timerCaller(dag), dag._id, "the DAG changed");
    }
  }

  /**
   * The DAG's schedule goes (its timer job, disarmed): no more fires. DAG runs in flight are left
   * alone (core deletes a timer job without touching the runs under its id, the DAG's task runs);
   * a DAG run held behind the timer's lock (QUEUE_ONE) still starts when the one it waits for ends
   * (see {@link startHeld}).
   */
  async detach(dag: Pick<DagDoc, "_id" | "ownerId">): Promise<void> {
    if (!(await findJob(this.deps.mongo, dag._id))) return;
    // A DAG run staged for a coming slot is not in flight yet: it goes with the schedule.
    await this.deps.runs.withdrawStaged({ _id: dag._id, dagId: dag._id }, "the DAG's schedule was removed", { includeDue: false });
    await this.deps.jobs.delete(timerCaller(dag), dag._id).catch((e: unknown) => {
      if (!(e instanceof NotFoundError)) throw e;
    });
  }

  async pause(dag: DagDoc): Promise<void> {
    if (await findJob(this.deps.mongo, dag._id)) await this.deps.jobs.pause(timerCaller(dag), dag._id);
  }

  async resume(dag: DagDoc): Promise<void> {
    if (await findJob(this.deps.mongo, dag._id)) await this.deps.jobs.resume(timerCaller(dag), dag._id);
  }

  /**
   * core's hook for a fire of a timer job: the DAG run of the fire, made once per fire key (a
   * replayed fire finds it), under the timer job's overlap lock unless the fire ignores it.
   */
  async fire(
    job: JobDoc,
    fire: { fireKey: string; scheduledFor: number; trigger: RunTrigger; notBefore?: number | null; ignoreOverlap: boolean },
    lock: DagFireLock,
  ): Promise<DagFired> {
    const { mongo } = this.deps;
    const existing = await findDagRunByFireKey(mongo, fire.fireKey);
    if (existing) return { dagRunId: existing._id, created: false, skipped: null };
    const dag = job.dagId ? await this.deps.definitions.dag(job.dagId) : null;
    if (!dag) return { dagRunId: null, created: false, skipped: "DAG deleted" };
    // A scheduled fire: the DAG run's first advance makes a run per root task (a mapped root, one
    // per element: counted as one here). Room for them under the owner's bound on runs waiting to
    // start (KAIROS_MAX_WAITING_RUNS), reserved until they are made, or no DAG run (SKIPPED_BACKLOG).
    const { waiting } = this.deps.runs;
    const first = fire.trigger === "SCHEDULE" ? dag.tasks.filter((t) => t.dependsOn.length === 0).length : 0;
    const room = await waiting.reserve(job.ownerId, first);
    if (!room.ok) return { dagRunId: null, created: false, skipped: backlogSkipReason(room.waiting, waiting.max, first), backlog: true };
    try {
      return await this.fireDag(job, dag, fire, lock);
    } finally {
      waiting.release(job.ownerId, first);
    }
  }

  private async fireDag(
    job: JobDoc,
    dag: DagDoc,
    fire: { fireKey: string; scheduledFor: number; trigger: RunTrigger; notBefore?: number | null; ignoreOverlap: boolean },
    lock: DagFireLock,
  ): Promise<DagFired> {
    const { mongo, clock } = this.deps;
    const id = newId();
    let held = false;
    let replaced: string | null = null;
    const locked = !fire.ignoreOverlap && job.overlap !== "ALLOW";
    if (locked) {
      const slot = await lock.take(id, this.lock);
      if (slot.decision === "SKIP") return { dagRunId: null, created: false, skipped: slot.reason };
      held = slot.decision === "HOLD";
      replaced = slot.replaced;
    }
    const now = clock();
    const doc = newDagRun(dag, {
      id,
      fireKey: fire.fireKey,
      trigger: fire.trigger,
      scheduledFor: fire.scheduledFor,
      paramsJson: dag.paramsJson,
      // Staged ahead (overlap ALLOW): its first tasks wait in their queues' staging until the slot's time.
      notBefore: fire.notBefore ?? null,
      held,
      lockJobId: locked ? job._id : null,
      now,
      sweepAfterMs: this.deps.sweepAfterMs,
    });
    const { run, created } = await insertOnce(mongo, doc);
    if (!created && locked) await lock.release(id, this.lock);
    // deleteDag may have run since the DAG was read here: its sweep of RUNNING DAG runs missed this one.
    if (created && !(await dagExists(mongo, dag._id))) {
      await this.deps.cancel(id, "its DAG was deleted while the fire made it");
      return { dagRunId: id, created, skipped: null };
    }
    if (created && !held) await this.deps.advancer.advance(id);
    if (created && replaced) await this.deps.cancel(replaced, `replaced by DAG run ${id} (overlap policy REPLACE)`);
    return { dagRunId: run._id, created, skipped: null };
  }

  /**
   * A DAG run is retried (retryDagRun): it takes its DAG's overlap lock again, as the fire or the
   * manual trigger that made it did (see {@link lockTrigger}), so the policy holds while it runs
   * again. The lock is the DAG's timer job's, with the policy the DAG has now; a BACKFILL DAG run,
   * or one whose DAG has no schedule now or the policy ALLOW, takes none. Refused as core refuses a
   * job's retry (RunService.takeOverlapForRequest, worded for DAG runs); QUEUE_ONE: the retry waits
   * `held` behind the holder; REPLACE: `replaced` is the DAG run it displaces (cancelled by the
   * caller once the retry is written). Call {@link unlock} if the retry is not written after all.
   */
  async relock(run: DagRunDoc): Promise<DagRunLock> {
    if (run.trigger === "BACKFILL") return NO_LOCK;
    return this.lockFor(run.dagId, run._id, { act: "retry", runId: run._id });
  }

  /**
   * A manual trigger (triggerDag) of a scheduled DAG takes the DAG's overlap lock for the DAG run
   * `dagRunId` it is about to write, as a job's retry takes its job's (FAILED_PRECONDITION
   * `not triggered: …` where a fire would be skipped, naming the DAG run that holds the lock and
   * the policy); `held` and `replaced` as for {@link relock}. A DAG without a schedule (no timer
   * job, so no lock) or with the policy ALLOW takes none. Call {@link unlock} if the DAG run is not
   * written after all.
   */
  lockTrigger(dagId: string, dagRunId: string): Promise<DagRunLock> {
    return this.lockFor(dagId, dagRunId, { act: "trigger", subjectId: dagId });
  }

  private async lockFor(dagId: string, dagRunId: string, ask: LockRequest): Promise<DagRunLock> {
    const job = await findJob(this.deps.mongo, dagId);
    if (!job?.dagId || job.overlap === "ALLOW") return NO_LOCK;
    const lock = await this.deps.runs.takeOverlapForRequest(job, dagRunId, this.lock, ask);
    return { lockJobId: lock.jobId, held: lock.held, replaced: lock.replaced };
  }

  /** Gives back a lock {@link relock} or {@link lockTrigger} took for a DAG run that was not written. */
  async unlock(lockJobId: string, dagRunId: string): Promise<void> {
    await this.deps.runs.releaseOverlapSlot(lockJobId, dagRunId, this.lock);
    // Without the timer job (the schedule was removed) there is no lock to pass on.
    if (!(await findJob(this.deps.mongo, lockJobId))) await this.startOrphan(lockJobId);
  }

  /** A DAG run ended: its timer job's lock goes back, and the DAG run held behind it (QUEUE_ONE) starts. */
  async finished(run: DagRunDoc): Promise<void> {
    if (run.lockJobId) await this.unlock(run.lockJobId, run._id);
  }

  /** The DAG run the timer job's lock was passed to starts, if it waits held (QUEUE_ONE's next; see LockSubject.startPassed). */
  private async startPassed(dagRunId: string): Promise<void> {
    const next = await findDagRun(this.deps.mongo, dagRunId);
    if (next?.held) await this.unhold(next);
  }

  /**
   * Starts the DAG run that holds the timer job's lock if it is still held (QUEUE_ONE's next).
   * Without the timer job (the schedule was removed, see {@link detach}) there is no lock to pass:
   * the DAG run held behind it starts once no DAG run of that lock is running.
   */
  private async startHeld(jobId: string): Promise<void> {
    const job = await findJob(this.deps.mongo, jobId);
    if (!job) return this.startOrphan(jobId);
    if (job.activeRunId) await this.startPassed(job.activeRunId);
  }

  /** A DAG run held behind the lock of timer job `jobId`, which is gone: it starts when nothing of that lock runs. */
  private async startOrphan(jobId: string): Promise<void> {
    const { held, holderRunning } = await findHeldBehind(this.deps.mongo, jobId);
    if (held && !holderRunning) await this.unhold(held);
  }

  private async unhold(run: Pick<DagRunDoc, "_id" | "version">): Promise<void> {
    if (await setDagRunAtVersion(this.deps.mongo, run._id, run.version, { held: false, updatedAt: new Date(this.deps.clock()) })) {
      await this.deps.advancer.advance(run._id);
    }
  }

  /**
   * Lock holders seen missing or ended on the last repair: a fire takes the lock before it inserts
   * its DAG run, and a retry (relock) before it writes its ended DAG run RUNNING again.
   */
  private suspectHolders: ReadonlySet<string> = new Set<string>();

  /**
   * Repairs timer locks (the sweeper, each pass): a lock held by a DAG run that ended (its end's
   * release was lost with its process) or that never got created, seen so on two passes in a row,
   * is released (judgeStaleHolds), and a held DAG run that has the lock starts.
   */
  async repairLocks(limit = 200): Promise<void> {
    const locked = await findLockedDagTimers(this.deps.mongo, limit);
    const stale: string[] = [];
    for (const j of locked) {
      const holder = await findDagRun(this.deps.mongo, j.activeRunId!);
      if (!holder || holder.status !== DagRunStatus.RUNNING) stale.push(j.activeRunId!);
    }
    const verdict = judgeStaleHolds(this.suspectHolders, stale);
    this.suspectHolders = verdict.suspects;
    const release = new Set(verdict.release);
    for (const j of locked) {
      if (release.has(j.activeRunId!)) {
        await this.deps.runs.releaseOverlapSlot(j._id, j.activeRunId!, this.lock);
        this.deps.log.warn({ jobId: j._id, dagRunId: j.activeRunId }, "released a stale DAG timer lock");
      }
      await this.startHeld(j._id);
    }
    // Held DAG runs whose lock is gone: their timer job was removed with the schedule (and maybe
    // made again by a new one, with a lock of its own that does not name them). A held DAG run is
    // named by its lock from before it is written (fire, retry) until it starts, so one that is
    // not is waiting on nothing but the DAG runs of its old lock.
    for (const h of await findHeldDagRuns(this.deps.mongo, limit)) {
      if (!h.lockJobId) continue;
      const j = await findJob(this.deps.mongo, h.lockJobId);
      if (!j || (j.activeRunId !== h._id && j.pendingRunId !== h._id)) await this.startOrphan(h.lockJobId);
    }
  }
}
