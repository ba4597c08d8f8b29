/**
 * One object for the run capabilities, for the roles and the API that need them all: it builds
 * the parts, wires them to each other, and delegates. Each method says where the work is done.
 */
import type { Principal } from "../../auth/index.js";
import type { JobDoc, RunDoc } from "../../domain/index.js";
import { findRun } from "../../store/index.js";
import { RunEvents } from "../events.js";
import { Attempts } from "./attempts.js";
import { Cancellation, type SystemCancel } from "./cancellation.js";
import { ClaimMarkerDrops } from "./claim-markers.js";
import { Claims } from "./claims.js";
import { Materializer, type Fired, type MaterializeArgs, type Materialized } from "./materialize.js";
import { OverlapLocks, type LockRequest, type LockSubject, type RequestLock } from "./overlap.js";
import { ReadyQueueing } from "./ready.js";
import { Retries } from "./retries.js";
import { StagedRuns, type WithdrawOptions, type WithdrawnFire } from "./staged.js";
import { Transitions } from "./transitions.js";
import type { AttemptOutcome, DagPort, RunServiceDeps } from "./types.js";
import { UserLimits } from "./user-limits.js";
import { UserSlots } from "./user-slots.js";
import { WaitingRuns } from "./waiting.js";

export class RunService {
  /** The DAG engine, once app/ connected it (see {@link connectDags}). */
  private dags: DagPort | null = null;
  readonly events: RunEvents;
  /** Each user's runs waiting to start, against KAIROS_MAX_WAITING_RUNS (see {@link WaitingRuns}). */
  readonly waiting: WaitingRuns;
  private readonly ready: ReadyQueueing;
  private readonly slots: UserSlots;
  private readonly transitions: Transitions;
  private readonly overlap: OverlapLocks;
  private readonly materializer: Materializer;
  private readonly claims: Claims;
  private readonly retries: Retries;
  private readonly attempts: Attempts;
  private readonly cancellation: Cancellation;
  private readonly staged: StagedRuns;

  constructor(private readonly deps: RunServiceDeps) {
    const { mongo, state, clock, log } = deps;
    const events = (this.events = new RunEvents(state.bus));
    const waiting = (this.waiting = new WaitingRuns({ mongo, clock, max: deps.maxWaitingRuns ?? null }));
    const limits = new UserLimits(mongo, clock);
    this.ready = new ReadyQueueing({ state, clock, limits });
    const enqueue = (run: RunDoc) => this.ready.enqueue(run);
    this.slots = new UserSlots({ mongo, clock, log, enqueue });
    // A transition gives back what the attempt held; releasing an overlap lock queues the run
    // held behind it, by a transition: the hooks reach the lock through `this` at call time.
    this.transitions = new Transitions({
      mongo,
      clock,
      events,
      log,
      hooks: {
        releaseUserSlot: (ownerId, slot) => this.slots.release(ownerId, slot),
        releaseOverlapLock: (jobId, runId) => this.overlap.release(jobId, runId),
        dagTaskEnded: (run) => this.dags?.taskEnded(run) ?? Promise.resolve(),
        dagTaskEnding: (run, to) => this.dags?.taskEnding(run, to),
      },
    });
    const transitions = this.transitions;
    this.overlap = new OverlapLocks({ mongo, clock, transitions, enqueue });
    this.cancellation = new Cancellation({ mongo, state, clock, transitions });
    this.materializer = new Materializer({
      mongo,
      clock,
      events,
      overlap: this.overlap,
      ready: this.ready,
      waiting,
      cancel: (runId, reason) => this.cancellation.cancelBySystem(runId, reason),
      dags: () => this.dags,
    });
    const markers = new ClaimMarkerDrops(state.ready, log);
    this.claims = new Claims({ mongo, clock, events, transitions, limits, slots: this.slots, markers, enqueue });
    this.retries = new Retries({
      mongo,
      state,
      clock,
      transitions,
      enqueue,
      overlap: this.overlap,
      waiting,
      cancel: (runId, reason) => this.cancellation.cancelBySystem(runId, reason),
    });
    this.attempts = new Attempts({ mongo, clock, random: deps.random ?? Math.random, transitions, retries: this.retries, markers, enqueue });
    this.staged = new StagedRuns({ mongo, state, clock, transitions, dagFires: () => this.dags?.staged });
  }

  /**
   * Connects the DAG engine (app/ wires it once both are built: the engine is made with this
   * service). A second connection is a wiring mistake.
   */
  connectDags(port: DagPort): void {
    if (this.dags) throw new Error("RunService: the DAG engine is connected already");
    this.dags = port;
  }

  get(runId: string): Promise<RunDoc | null> {
    return findRun(this.deps.mongo, runId);
  }

  /** Creates the run for one fire of a job (see {@link Materializer.materialize}). */
  materialize(job: JobDoc, args: MaterializeArgs): Promise<Materialized> {
    return this.materializer.materialize(job, args);
  }

  /** One schedule slot's fire: the job's run, or a scheduled DAG's DAG run (see {@link Materializer.fire}). */
  fire(job: JobDoc, args: MaterializeArgs): Promise<Fired> {
    return this.materializer.fire(job, args);
  }

  /** The overlap decision for a new holder `runId` of `job`'s lock, taken unless SKIP (see {@link OverlapLocks.take}). */
  takeOverlapSlot(job: JobDoc, runId: string): ReturnType<OverlapLocks["take"]> {
    return this.overlap.take(job, runId);
  }

  /** The lock for a user's retry or trigger, or its refusal (see {@link OverlapLocks.takeForRequest}). */
  takeOverlapForRequest(job: JobDoc, runId: string, subject: LockSubject, ask: LockRequest): Promise<RequestLock> {
    return this.overlap.takeForRequest(job, runId, subject, ask);
  }

  /** Frees the job's overlap lock held by `runId`, starting the next holder as `subject` does (see {@link OverlapLocks.release}). */
  releaseOverlapSlot(jobId: string, runId: string, subject?: LockSubject): Promise<void> {
    return this.overlap.release(jobId, runId, subject);
  }

  /** Pushes a QUEUED run to its pool's ready queue (see {@link ReadyQueueing.enqueue}). */
  enqueue(run: RunDoc): Promise<void> {
    return this.ready.enqueue(run);
  }

  /** Back to the queue after a taken entry's claim never reached the store (see {@link Claims.requeueTaken}). */
  requeueTaken(runId: string, reason?: string, expectedToken?: number, once = false): Promise<RunDoc | null> {
    return this.claims.requeueTaken(runId, reason, expectedToken, once);
  }

  /** Claims a batch of popped runs (see {@link Claims.claimMany}). */
  claimMany(runIds: readonly string[], nodeId: string, leaseMs: number, nodeEpoch: number | null = null): Promise<RunDoc[]> {
    return this.claims.claimMany(runIds, nodeId, leaseMs, nodeEpoch);
  }

  /** Confirms the claim of a run started from its payload (see {@link Claims.confirm}). */
  confirmClaim(queued: RunDoc, nodeId: string, leaseMs: number, startedAt: number, nodeEpoch: number | null = null): Promise<RunDoc | null> {
    return this.claims.confirm(queued, nodeId, leaseMs, startedAt, nodeEpoch);
  }

  /** Takes back a job's runs staged ahead of their fire time (see {@link StagedRuns.withdraw}). */
  withdrawStaged(job: Pick<JobDoc, "_id" | "dagId">, reason: string, opts: WithdrawOptions = {}): Promise<WithdrawnFire[]> {
    return this.staged.withdraw(job, reason, opts);
  }

  /** Lets the owner's parked runs back into the queue as far as slots allow (see {@link UserSlots.wakeHeld}). */
  wakeHeld(ownerId: string): Promise<number> {
    return this.slots.wakeHeld(ownerId);
  }

  /** Reaper repair of the per-user slots (see {@link UserSlots.reconcile}). */
  reconcileUserSlots(suspects: ReadonlySet<string>): Promise<{ released: number; woken: number; suspects: Set<string> }> {
    return this.slots.reconcile(suspects);
  }

  /** Which of the attempts a node holds are no longer its own or asked to cancel; its runs it runs nothing of, released (see {@link Attempts.checkHeld}). */
  checkHeld(nodeId: string, held: ReadonlyArray<{ runId: string; token: number }>, known: ReadonlySet<string>): Promise<{ lost: string[]; cancelled: string[]; released: number }> {
    return this.attempts.checkHeld(nodeId, held, known);
  }


  /** Records the end of an attempt and what follows (see {@link Attempts.finish}). */
  finishAttempt(run: RunDoc, outcome: AttemptOutcome): Promise<RunDoc | null> {
    return this.attempts.finish(run, outcome);
  }

  /** An attempt lost with its executor, while its lease is still over (see {@link Attempts.reclaimLost}). */
  reclaimLost(run: RunDoc, outcome: AttemptOutcome, now: number): Promise<RunDoc | null> {
    return this.attempts.reclaimLost(run, outcome, now);
  }

  /** Records an attempt whose claim was never confirmed, with its claim (see {@link Attempts.finishTaken}). */
  finishTaken(queued: RunDoc, nodeId: string, leaseMs: number, startedAt: number, outcome: AttemptOutcome): Promise<RunDoc | null> {
    return this.attempts.finishTaken(queued, nodeId, leaseMs, startedAt, outcome);
  }

  /** Hands a running attempt back to the queue on shutdown (see {@link Attempts.handBack}). */
  handBack(runId: string, token: number, attempt: number): Promise<RunDoc | null> {
    return this.attempts.handBack(runId, token, attempt);
  }

  /** The retry timer fired: RETRY_SCHEDULED → QUEUED (see {@link Retries.promote}). */
  promoteRetry(runId: string): Promise<RunDoc | null> {
    return this.retries.promote(runId);
  }

  /** Re-runs a finished run without success for `caller` (see {@link Retries.retryRun}). */
  retryRun(caller: Principal, runId: string): Promise<RunDoc> {
    return this.retries.retryRun(caller, runId);
  }

  /** Cancels a run for `caller`; another user's run is NOT_FOUND (see {@link Cancellation.cancel}). */
  cancel(caller: Principal, runId: string, reason: string): Promise<RunDoc> {
    return this.cancellation.cancel(caller, runId, reason);
  }

  /** Cancels a run the system decided to stop: no principal (see {@link Cancellation.cancelBySystem}). */
  cancelBySystem(runId: string, reason: string, opts?: SystemCancel): Promise<RunDoc> {
    return this.cancellation.cancelBySystem(runId, reason, opts);
  }
}
