/**
 * The effects a job timer's fire needs (fire-job.ts), as a port: the fire itself is the order of
 * these calls around the pure decisions of timing/decide-fire.ts. `storeFirePort` is the one the
 * scheduler runs (MongoDB, the shared state's wheel, RunService); the property tests of firing
 * (test/timing) drive the same JobFirer against an in-memory port.
 */
import type { AlertDeadlines, Fired, RunService } from "../core/index.js";
import { FireLedger } from "../core/index.js";
import type { JobDoc } from "../domain/index.js";
import { advanceJob, createAdvanceBatch, findJob, findRunByFireKey } from "../store/index.js";
import type { Mongo } from "../store/index.js";
import type { SharedState, ShardFence } from "../shared-state/index.js";
import type { FireJob, JobAdvance, LedgerEntry, RunRequest } from "../timing/index.js";

/** The job as a fire reads it: what the decisions read, and its owner (the waiting-runs bound). */
export type FiringJob = FireJob & Pick<JobDoc, "ownerId">;

/** What one slot's fire made: RunService.fire's answer (a run, or a scheduled DAG's DAG run). */
export type CreatedRun = Fired;

export interface FirePort<J extends FiringJob = JobDoc> {
  /** The job of a timer (null: it is gone). */
  loadJob(jobId: string): Promise<J | null>;
  /** The per-owner bound on runs waiting to start (KAIROS_MAX_WAITING_RUNS). */
  readonly waiting: {
    readonly max: number | null;
    reserve(ownerId: string, runs: number): Promise<{ ok: true } | { ok: false; waiting: number }>;
    release(ownerId: string, runs: number): void;
  };
  /** The run made for a fireKey already (a previous attempt died after making it), if any. */
  findRunByFireKey(fireKey: string): Promise<{ _id: string } | null>;
  /** Creates the run of one slot; the store applies the overlap policy and may refuse it. */
  createRun(job: J, req: RunRequest): Promise<CreatedRun>;
  /** Writes the fire ledger: one outcome per slot, insert-once. */
  recordLedger(job: J, entries: readonly LedgerEntry[], now: number): Promise<void>;
  /** Moves the job's cursor and next fire if its version is still the one read; true when it matched. */
  advanceJob(job: J, advance: JobAdvance): Promise<boolean>;
  /** Takes back the runs a fire staged ahead (the job changed meanwhile). */
  withdrawStaged(job: J, reason: string, runIds: readonly string[]): Promise<void>;
  /** Clears the timer from in-flight and re-arms it at `at` (null: not at all), in one atomic step. */
  complete(fence: ShardFence, timerId: string, at: number | null): Promise<void>;
}

export interface StoreFirePortDeps {
  mongo: Mongo;
  state: SharedState;
  runs: RunService;
}

/** The port over MongoDB, the shared state's timer wheel and RunService. */
export function storeFirePort({ mongo, state, runs }: StoreFirePortDeps): FirePort<JobDoc> {
  const ledger = new FireLedger(mongo);
  /** The job updates of a pass's fires, as bulkWrites (the `schedulerOp` field tells which applied). */
  const advances = createAdvanceBatch(mongo);
  return {
    loadJob: (jobId) => findJob(mongo, jobId),
    waiting: runs.waiting,
    findRunByFireKey: (key) => findRunByFireKey(mongo, key),
    createRun: (job, req) => runs.fire(job, { scheduledFor: req.slot.at, trigger: "SCHEDULE", notBefore: req.notBefore }),
    recordLedger: async (job, entries, now) => {
      await ledger.record(job, entries, now);
    },
    advanceJob: (job, advance) => advanceJob(advances, job, advance),
    withdrawStaged: async (job, reason, only) => {
      await runs.withdrawStaged(job, reason, { only: [...only] });
    },
    complete: (fence, timerId, at) => state.wheel.complete(fence, timerId, at),
  };
}

/**
 * `port` with alert deadlines armed for a fire's slots right after its ledger is written (before
 * the job timer completes: a fire replayed after a crash writes the ledger again and arms again,
 * which changes nothing armed or decided already).
 */
export function armingDeadlines(port: FirePort<JobDoc>, deadlines: Pick<AlertDeadlines, "armFor">): FirePort<JobDoc> {
  return {
    ...port,
    recordLedger: async (job, entries, now) => {
      await port.recordLedger(job, entries, now);
      await deadlines.armFor(job, entries);
    },
  };
}
