/**
 * Creating the run for one fire of a job (a schedule slot, a manual trigger, a backfill),
 * identified by its fire key, with the job's overlap policy applied.
 */
import type { JobDoc, RunDoc, RunTrigger } from "../../domain/index.js";
import type { OverlapPolicy } from "../../domain/index.js";
import { fireKey, readyQueueOf } from "../../domain/index.js";
import { RunStatus } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import type { InsertBatcher } from "../../store/index.js";
import { isDuplicateKey, newId, type Mongo } from "../../store/index.js";
import { createRunInserter, findRunByFireKey } from "../../store/index.js";
import type { RunEvents } from "../events.js";
import type { OverlapLocks } from "./overlap.js";
import type { ReadyQueueing } from "./ready.js";
import type { DagFireLock, DagPort } from "./types.js";
import type { WaitingRuns } from "./waiting.js";
import { activeTraceparent, withFireSpan } from "../../support/index.js";

export interface MaterializeArgs {
  scheduledFor: number;
  trigger: RunTrigger;
  fireKey?: string;
  reason?: string;
  ignoreOverlap?: boolean;
  /** Staged ahead: not taken by an executor before this instant (the slot's due time). */
  notBefore?: number;
  /** A DAG task instance's run: its DAG run, task key and map index (src/dag/engine). */
  dagTask?: { dagRunId: string; taskKey: string; mapIndex: number | null };
}

export interface Materialized {
  run: RunDoc | null;
  created: boolean;
  skipped: string | null;
}

/**
 * What one schedule slot's fire made, whatever the job is: its run, or for a scheduled DAG's timer
 * job its DAG run (the scheduler's fire path records either id in the ledger, and takes back what
 * it staged ahead by it).
 */
export interface Fired {
  /** What was made (or found: a replay): its id, and whether it waits for its slot's time (staged). Null when refused. */
  made: { id: string; staged: boolean } | null;
  created: boolean;
  skipped: string | null;
  /** `skipped` for the owner's backlog (a scheduled DAG's first tasks over KAIROS_MAX_WAITING_RUNS), not the overlap policy. */
  backlog?: boolean;
}

/** A new run of `job` for one fire, as it is inserted. */
export function newRun(
  job: JobDoc,
  args: MaterializeArgs,
  r: { id: string; key: string; status: RunStatus; overlap: OverlapPolicy; now: number },
): RunDoc {
  const at = new Date(r.now);
  return {
    _id: r.id,
    ownerId: job.ownerId,
    jobId: job._id,
    jobName: job.name,
    fireKey: r.key,
    trigger: args.trigger,
    scheduledFor: new Date(args.scheduledFor),
    status: r.status,
    attempt: 1,
    retry: job.retry,
    overlap: r.overlap,
    fencingToken: 0,
    priority: job.priority,
    pool: readyQueueOf(job.spec),
    spec: job.spec,
    nodeId: null,
    leaseUntil: null,
    cancelRequested: false,
    notBefore: args.notBefore !== undefined && args.notBefore > r.now ? new Date(args.notBefore) : null,
    queuedAt: r.status === RunStatus.QUEUED ? at : null,
    startedAt: null,
    finishedAt: null,
    retryAt: null,
    exitCode: null,
    signal: null,
    error: null,
    outputTail: null,
    outputTruncated: false,
    history: [{ status: r.status, at, reason: args.reason ?? args.trigger.toLowerCase(), nodeId: null, attempt: 1 }],
    ...(args.dagTask ? { dagRunId: args.dagTask.dagRunId, taskKey: args.dagTask.taskKey, mapIndex: args.dagTask.mapIndex } : {}),
    ...activeTraceparent(),
    createdAt: at,
    updatedAt: at,
  };
}

export class Materializer {
  /** Run inserts of one event-loop turn go to MongoDB as one insertMany (a burst of fires). */
  private readonly inserts: InsertBatcher<RunDoc>;

  constructor(
    private readonly deps: {
      mongo: Mongo;
      clock: Clock;
      events: RunEvents;
      overlap: OverlapLocks;
      /** A new QUEUED run's ready-queue entry is made while its insert is in flight, and pushed once it landed. */
      ready: Pick<ReadyQueueing, "entryOf" | "push">;
      /** Every run made here waits to start: counted against its owner's bound until the next count sees it. */
      waiting: Pick<WaitingRuns, "added">;
      /** Cancels the run a REPLACE displaced (no principal: the policy decided it). */
      cancel: (runId: string, reason: string) => Promise<RunDoc>;
      /** The DAG engine, which makes a DAG timer's fire (DagPort.fire), once connected. */
      dags: () => DagPort | null;
    },
  ) {
    this.inserts = createRunInserter(deps.mongo);
  }

  /**
   * Creates the run for one fire of a job, identified by `fireKey`. Creating the same fire twice is
   * a no-op that returns the existing run (`created: false`): that is what makes replays after a
   * crash safe. The job's overlap policy is applied here, atomically: see {@link OverlapLocks.take}.
   * Returns `run: null` when the policy skipped the fire.
   */
  materialize(job: JobDoc, args: MaterializeArgs): Promise<Materialized> {
    if (job.dagId) return Promise.reject(new Error(`job ${job._id} is DAG ${job.dagId}'s timer: its fires make DAG runs (Materializer.fire)`));
    return withFireSpan(job, { slotAt: args.scheduledFor, trigger: args.trigger, now: this.deps.clock() }, () => this.create(job, args));
  }

  /**
   * One schedule slot's fire of `job`: its run (see {@link materialize}), or, for a scheduled DAG's
   * timer job, the DAG run the DAG engine makes for it (once per fire key) under the timer job's
   * overlap lock.
   */
  fire(job: JobDoc, args: MaterializeArgs): Promise<Fired> {
    return withFireSpan(job, { slotAt: args.scheduledFor, trigger: args.trigger, now: this.deps.clock() }, async () => {
      if (!job.dagId) {
        const { run, created, skipped } = await this.create(job, args);
        return { made: run ? { id: run._id, staged: run.notBefore !== null } : null, created, skipped };
      }
      const dags = this.deps.dags();
      if (!dags) throw new Error(`DAG ${job.dagId} fired before the DAG engine was connected`);
      return this.fireDag(job, args, dags);
    });
  }

  private async create(job: JobDoc, args: MaterializeArgs): Promise<Materialized> {
    const { mongo } = this.deps;
    const key = args.fireKey ?? fireKey(job._id, args.scheduledFor);
    const id = newId();
    let status: RunStatus = RunStatus.QUEUED;
    let replaced: string | null = null;
    const overlap = args.ignoreOverlap ? "ALLOW" : job.overlap;
    if (overlap !== "ALLOW") {
      // A replay of a fire that already has its run must not be judged against its own run.
      const existing = await findRunByFireKey(mongo, key);
      if (existing) return { run: existing, created: false, skipped: null };
      const slot = await this.deps.overlap.take(job, id);
      if (slot.decision === "SKIP") return { run: null, created: false, skipped: slot.reason };
      if (slot.decision === "HOLD") status = RunStatus.PENDING;
      replaced = slot.replaced;
    }
    const run = newRun(job, args, { id, key, status, overlap, now: this.deps.clock() });
    // The entry (its payload encoded) is made while the insert is in flight: a fan-out of 1,000
    // runs is pushed as soon as its insert lands, not after 1,000 encodings more.
    const entry = status === RunStatus.QUEUED ? this.deps.ready.entryOf(run) : null;
    entry?.catch(() => undefined); // awaited below, or dropped with the insert's failure
    const existing = await this.insert(run, job);
    if (existing) return { run: existing, created: false, skipped: null };
    this.deps.waiting.added(run.ownerId);
    if (entry) await this.deps.ready.push(run.pool, await entry);
    await this.deps.events.publish(run);
    if (status === RunStatus.PENDING) await this.deps.overlap.queueIfPassed(job._id, id);
    if (replaced) await this.deps.cancel(replaced, `replaced by run ${id} (overlap policy REPLACE)`).catch(() => undefined);
    return { run, created: true, skipped: null };
  }

  /** A scheduled DAG's timer job fired: the DAG engine makes the DAG run, under the timer job's overlap lock. */
  private async fireDag(job: JobDoc, args: MaterializeArgs, dags: DagPort): Promise<Fired> {
    const key = args.fireKey ?? fireKey(job._id, args.scheduledFor);
    const notBefore = args.notBefore !== undefined && args.notBefore > this.deps.clock() ? args.notBefore : null;
    const lock: DagFireLock = { take: (id, subject) => this.deps.overlap.take(job, id, subject), release: (id, subject) => this.deps.overlap.release(job._id, id, subject) };
    const fired = await dags.fire(job, { fireKey: key, scheduledFor: args.scheduledFor, trigger: args.trigger, notBefore: args.notBefore ?? null, ignoreOverlap: args.ignoreOverlap ?? false }, lock);
    if (!fired.dagRunId) return { made: null, created: false, skipped: fired.skipped, ...(fired.backlog ? { backlog: true } : {}) };
    return { made: { id: fired.dagRunId, staged: notBefore !== null }, created: fired.created, skipped: null };
  }

  /** Inserts the run; when its fire already has one (a duplicate key), that run is returned instead. */
  private async insert(run: RunDoc, job: JobDoc): Promise<RunDoc | null> {
    try {
      await this.inserts.insertOne(run);
      return null;
    } catch (e) {
      if (run.overlap !== "ALLOW") await this.deps.overlap.release(job._id, run._id);
      if (!isDuplicateKey(e)) throw e;
      const existing = await findRunByFireKey(this.deps.mongo, run.fireKey);
      if (!existing) throw e;
      return existing;
    }
  }
}
