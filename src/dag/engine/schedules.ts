/**
 * Scheduled DAGs (docs/dags.md, "Schedules"; docs/decisions.md). A DAG's schedule is carried by a
 * hidden *timer job* with the DAG's id and `dagId` set, so the job scheduling machinery fires it
 * exactly as it fires a job: every schedule kind, jitter and spread, the misfire policy, the fire
 * ledger (one outcome per slot), pause and resume, the wheel's crash safety. Only what a fire makes
 * differs: core's Materializer hands a timer job's fire to {@link DagSchedules.fire}, which makes
 * the DAG run (once per fire key) under the timer job's overlap lock, so the overlap policies hold
 * between DAG runs. The lock is given back when the DAG run ends; a DAG run held behind it
 * (QUEUE_ONE) then starts. Users never see the timer job: it is NOT_FOUND as a job and left out
 * of job listings; they change it through the DAG.
 */
import type { Principal } from "../../auth/index.js";
import type { DagFired, DagFireLock, JobService, RunService } from "../../core/index.js";
import type { DagDoc, DagRunDoc, JobDoc, RunTrigger } from "../../domain/index.js";
import { DagRunStatus, NotFoundError } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import type { Logger } from "../../support/index.js";
import type { ScheduleInput } from "../../timing/index.js";
import { findDag, findDagRun, findDagRunByFireKey, findJob, findLockedDagTimers, newId, updateDagRunAtVersion, type Mongo } from "../../store/index.js";
import type { DagAdvancer } from "./advance.js";
import type { DagPatch } from "./definition.js";
import { insertOnce, newDagRun } from "./runs.js";

export interface DagSchedulesDeps {
  mongo: Mongo;
  jobs: JobService;
  runs: RunService;
  clock: Clock;
  log: Logger;
  advancer: DagAdvancer;
  sweepAfterMs: number;
  /** Cancels a DAG run (REPLACE displaced it). */
  cancel: (dagRunId: string, reason: string) => Promise<void>;
}

/** The timer job's name: unique per owner, and no user job can be named so (a DAG id). */
const timerName = (dagId: string) => `dag:${dagId}`;

/** The DAG engine acting on a DAG's timer job, as its owner (auth/access.ts visibleJob). */
function timerCaller(dag: Pick<DagDoc, "_id" | "ownerId">): Principal & { dagTimerOf: string } {
  return { userId: dag.ownerId, username: `dag:${dag._id}`, role: "USER", dagTimerOf: dag._id };
}

export class DagSchedules {
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
      { id: dag._id },
    );
  }

  /** The DAG changed: its timer follows (a new schedule, misfire or overlap policy); made if the DAG got its first schedule. */
  async sync(dag: DagDoc, patch: DagPatch): Promise<void> {
    const timer = await findJob(this.deps.mongo, dag._id);
    if (!timer) {
      if (patch.schedule) await this.attach(dag, { ...patch, schedule: patch.schedule });
      return;
    }
    if (patch.schedule == null && patch.misfire == null && patch.overlap == null && patch.catchupWindow == null) return;
    await this.deps.jobs.update(timerCaller(dag), dag._id, {
      ...(patch.schedule ? { schedule: patch.schedule } : {}),
      ...(patch.misfire ? { misfire: patch.misfire } : {}),
      ...(patch.overlap ? { overlap: patch.overlap } : {}),
      ...(patch.catchupWindow ? { catchupWindow: patch.catchupWindow } : {}),
    });
  }

  async detach(dag: DagDoc): Promise<void> {
    if (!(await findJob(this.deps.mongo, dag._id))) return;
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
    fire: { fireKey: string; scheduledFor: number; trigger: RunTrigger; ignoreOverlap: boolean },
    lock: DagFireLock,
  ): Promise<DagFired> {
    const { mongo, clock } = this.deps;
    const existing = await findDagRunByFireKey(mongo, fire.fireKey);
    if (existing) return { dagRunId: existing._id, created: false, skipped: null };
    const dag = job.dagId ? await findDag(mongo, job.dagId) : null;
    if (!dag) return { dagRunId: null, created: false, skipped: "DAG deleted" };
    const id = newId();
    let held = false;
    let replaced: string | null = null;
    const locked = !fire.ignoreOverlap && job.overlap !== "ALLOW";
    if (locked) {
      const slot = await lock.take(id);
      if (slot.decision === "SKIP") return { dagRunId: null, created: false, skipped: slot.reason.replace(/^run /, "DAG run ") };
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
      held,
      lockJobId: locked ? job._id : null,
      now,
      sweepAfterMs: this.deps.sweepAfterMs,
    });
    const { run, created } = await insertOnce(mongo, doc);
    if (!created && locked) await lock.release(id);
    // deleteDag may have run since the DAG was read here: its sweep of RUNNING DAG runs missed this one.
    if (created && !(await findDag(mongo, dag._id))) {
      await this.deps.cancel(id, "its DAG was deleted while the fire made it");
      return { dagRunId: id, created, skipped: null };
    }
    if (created && !held) await this.deps.advancer.advance(id);
    if (created && replaced) await this.deps.cancel(replaced, `replaced by DAG run ${id} (overlap policy REPLACE)`);
    return { dagRunId: run._id, created, skipped: null };
  }

  /** A DAG run ended: its timer job's lock goes back, and the DAG run held behind it (QUEUE_ONE) starts. */
  async finished(run: DagRunDoc): Promise<void> {
    if (!run.lockJobId) return;
    await this.deps.runs.releaseOverlapSlot(run.lockJobId, run._id);
    await this.startHeld(run.lockJobId);
  }

  /** Starts the DAG run that holds the timer job's lock if it is still held (QUEUE_ONE's next). */
  private async startHeld(jobId: string): Promise<void> {
    const job = await findJob(this.deps.mongo, jobId);
    if (!job?.activeRunId) return;
    const next = await findDagRun(this.deps.mongo, job.activeRunId);
    if (!next?.held) return;
    if (await updateDagRunAtVersion(this.deps.mongo, next._id, next.version, { held: false, updatedAt: new Date(this.deps.clock()) })) {
      await this.deps.advancer.advance(next._id);
    }
  }

  /** DAG runs whose lock holder seen missing on the last repair (it may have been being inserted). */
  private missingHolders = new Set<string>();

  /**
   * Repairs timer locks (the sweeper, each pass): a lock held by a DAG run that ended (its end's
   * release was lost with its process) or that never got created is released, and a held DAG run
   * that has the lock starts.
   */
  async repairLocks(limit = 200): Promise<void> {
    const stillMissing = new Set<string>();
    for (const j of await findLockedDagTimers(this.deps.mongo, limit)) {
      const holder = await findDagRun(this.deps.mongo, j.activeRunId!);
      const gone = holder ? holder.status !== DagRunStatus.RUNNING : this.missingHolders.has(j.activeRunId!);
      if (!holder && !gone) stillMissing.add(j.activeRunId!);
      if (gone) {
        await this.deps.runs.releaseOverlapSlot(j._id, j.activeRunId!);
        this.deps.log.warn({ jobId: j._id, dagRunId: j.activeRunId }, "released a stale DAG timer lock");
      }
      await this.startHeld(j._id);
    }
    this.missingHolders = stillMissing;
  }
}
