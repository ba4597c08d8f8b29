/**
 * A job's overlap policy, applied atomically on the job document: the lock fields `activeRunId`
 * / `pendingRunId` change only by compare-and-set against the state the decision was made on, so
 * two fires (or a fire and a finishing run) can never both win. A lost race re-reads and decides
 * again.
 */
import type { JobDoc, RunDoc } from "../../domain/index.js";
import type { OverlapPolicy } from "../../domain/index.js";
import { ConcurrentChangeError, PreconditionError } from "../../domain/index.js";
import { RunStatus } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import { decideOverlap } from "../../timing/index.js";
import { dropPendingRun, findPendingBehind, findRun, passOverlapLock, readOverlapLock, setOverlapLockIf } from "../../store/index.js";
import type { Mongo } from "../../store/index.js";
import type { Transitions } from "./transitions.js";

/** Compare-and-set rounds before a contended lock gives up. */
const LOCK_ROUNDS = 16;

export interface OverlapSlot {
  decision: "START" | "HOLD" | "SKIP" | "REPLACE";
  reason: string;
  /** The active run a REPLACE displaces (to be cancelled). */
  replaced: string | null;
}

/**
 * Whose overlap lock it is, as data: a job's lock is held by its runs; a scheduled DAG's (its timer
 * job's) by its DAG runs. Refusals and hand-offs are written once and worded from this.
 */
export interface LockSubject {
  /** What owns the lock, in messages: "its job's overlap policy", "DAG d's overlap policy". */
  kind: "job" | "DAG";
  /** What holds it, in messages: "run r holds the lock", "DAG run r holds the lock". */
  runNoun: "run" | "DAG run";
  /**
   * The lock was passed to `runId`, which waited behind it (QUEUE_ONE's next): start it. For a job,
   * its PENDING run is queued; a DAG's held DAG run is started by the DAG engine.
   */
  startPassed?: (runId: string, reason: string) => Promise<void>;
}

/** A job's lock, held by its runs. */
export const JOB_LOCK: LockSubject = { kind: "job", runNoun: "run" };

/** What a user asked for when a request takes a lock: a retry of run `runId`, or a trigger of `subjectId` (the job or DAG). */
export type LockRequest = { act: "retry"; runId: string } | { act: "trigger"; subjectId: string };

/** A request's hold on the lock (see {@link OverlapLocks.takeForRequest}). */
export interface RequestLock {
  jobId: string;
  policy: OverlapPolicy;
  /** QUEUE_ONE: the new holder waits behind `holder`. */
  held: boolean;
  holder: string | null;
  /** REPLACE: the holder it displaces, to be cancelled once the request is written. */
  replaced: string | null;
}

export class OverlapLocks {
  constructor(private readonly deps: { mongo: Mongo; clock: Clock; transitions: Transitions; enqueue: (run: RunDoc) => Promise<void> }) {}

  /** The overlap decision for a new run `runId` of `job`, with the lock taken when it is not SKIP. */
  async take(job: JobDoc, runId: string, subject: LockSubject = JOB_LOCK): Promise<OverlapSlot> {
    const { mongo } = this.deps;
    for (let i = 0; i < LOCK_ROUNDS; i++) {
      const cur = await readOverlapLock(mongo, job._id);
      if (!cur) return { decision: "SKIP", reason: "job deleted", replaced: null };
      const decision = decideOverlap(job.overlap, { active: cur.active ? 1 : 0, pending: cur.pending ? 1 : 0 });
      if (decision === "SKIP") return { decision, reason: skipReason(cur, job.overlap, subject), replaced: null };
      const set = decision === "HOLD" ? { pendingRunId: runId } : { activeRunId: runId };
      if (await setOverlapLockIf(mongo, job._id, cur, set)) {
        return { decision, reason: "", replaced: decision === "REPLACE" ? cur.active : null };
      }
    }
    throw new ConcurrentChangeError(`job ${job._id}: overlap lock is too contended; try again`);
  }

  /**
   * The lock for what a user asked for (a retry, a trigger) taken under `runId`, the id of the holder
   * about to be written, as a fire would take it, except that where a fire would be skipped
   * (FORBID with a holder, QUEUE_ONE with one already waiting) the request is refused with
   * FAILED_PRECONDITION naming the holder: the user asked, so nothing is dropped silently. A hold
   * `runId` still has from before (its end's give-back was lost, or an earlier attempt of the same
   * request died before writing it) is stale and given back first. Call {@link release} if the
   * holder is not written after all.
   */
  async takeForRequest(job: JobDoc, runId: string, subject: LockSubject, ask: LockRequest): Promise<RequestLock> {
    await this.release(job._id, runId, subject);
    const slot = await this.take(job, runId, subject);
    if (slot.decision === "SKIP") throw new PreconditionError(refusal(subject, ask, job.overlap, await readOverlapLock(this.deps.mongo, job._id)));
    const holder = slot.decision === "HOLD" ? ((await readOverlapLock(this.deps.mongo, job._id))?.active ?? null) : null;
    return { jobId: job._id, policy: job.overlap, held: slot.decision === "HOLD", holder, replaced: slot.replaced };
  }

  /**
   * Frees the job's overlap lock held by `runId` (the run reached a final status, or was never
   * created). When a run was held behind it (QUEUE_ONE), it takes the lock and is started (a job's
   * run queued, or as the `subject` starts its own).
   */
  async release(jobId: string, runId: string, subject: LockSubject = JOB_LOCK): Promise<void> {
    const { mongo } = this.deps;
    await dropPendingRun(mongo, jobId, runId);
    for (let i = 0; i < LOCK_ROUNDS; i++) {
      const cur = await findPendingBehind(mongo, jobId, runId);
      if (!cur) return;
      const next = cur.pending;
      if (!(await passOverlapLock(mongo, jobId, runId, next))) continue;
      if (next) await (subject.startPassed ?? this.queuePending.bind(this))(next, `previous run ${runId} finished`);
      return;
    }
  }

  /**
   * A run just inserted PENDING (held behind the lock) whose lock was passed to it meanwhile: the
   * run holding it ended between the hold and the insert, and its release could not queue a run
   * not written yet. Queued now; without this it waited for the reaper's lock repair.
   */
  async queueIfPassed(jobId: string, runId: string): Promise<void> {
    const cur = await readOverlapLock(this.deps.mongo, jobId);
    if (cur?.active === runId) await this.queuePending(runId, "the run ahead of it finished while it was being created");
  }

  /**
   * The run held behind the lock goes to the ready queue: PENDING → QUEUED (once: the transition is
   * conditional). Its history entry names its own attempt: a held run is a fire's (attempt 1) or a
   * retry's (the attempt it retries into).
   */
  private async queuePending(runId: string, reason: string): Promise<void> {
    const held = await findRun(this.deps.mongo, runId);
    if (!held || held.status !== RunStatus.PENDING) return;
    const queued = await this.deps.transitions.apply(runId, {
      to: RunStatus.QUEUED,
      from: [RunStatus.PENDING],
      set: { queuedAt: new Date(this.deps.clock()) },
      reason,
      attempt: held.attempt,
    });
    if (queued) await this.deps.enqueue(queued);
  }
}

/** Why a fire or trigger is skipped: the holder of the lock, and the one already waiting behind it (QUEUE_ONE), worded for the subject. */
function skipReason(cur: { active: string | null; pending: string | null }, policy: string, subject: LockSubject): string {
  const noun = subject.runNoun;
  const held = cur.active ? `${noun} ${cur.active} is still active` : null;
  const waiting = cur.pending ? `${noun} ${cur.pending} already waits for the lock` : null;
  return `${[held, waiting].filter(Boolean).join(" and ") || `another ${noun} holds the lock`} (overlap policy ${policy})`;
}

/** Why a request (retry, trigger) was refused the lock: who holds it (and who waits, QUEUE_ONE), worded for the subject. */
function refusal(subject: LockSubject, ask: LockRequest, policy: OverlapPolicy, cur: { active: string | null; pending: string | null } | null): string {
  const noun = subject.runNoun;
  const why =
    policy === "QUEUE_ONE" && cur?.pending
      ? `${noun} ${cur.pending} is already waiting for the lock` + (cur.active ? ` behind ${noun} ${cur.active}` : "")
      : `${noun} ${cur?.active ?? "(another)"} holds the lock`;
  return ask.act === "retry"
    ? `${noun} ${ask.runId} cannot be retried now: its ${subject.kind}'s overlap policy is ${policy} and ${why}; retry it once that ${noun} has ended (or cancel it)`
    : `not triggered: ${subject.kind} ${ask.subjectId}'s overlap policy is ${policy} and ${why}; trigger it once that ${noun} has ended (or cancel it)`;
}
