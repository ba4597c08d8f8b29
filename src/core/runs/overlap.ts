/**
 * A job's overlap policy, applied atomically on the job document: the lock fields `activeRunId`
 * / `pendingRunId` change only by compare-and-set against the state the decision was made on, so
 * two fires (or a fire and a finishing run) can never both win. A lost race re-reads and decides
 * again.
 */
import type { JobDoc, RunDoc } from "../../domain/index.js";
import { ConcurrentChangeError } from "../../domain/index.js";
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

export class OverlapLocks {
  constructor(private readonly deps: { mongo: Mongo; clock: Clock; transitions: Transitions; enqueue: (run: RunDoc) => Promise<void> }) {}

  /** The overlap decision for a new run `runId` of `job`, with the lock taken when it is not SKIP. */
  async take(job: JobDoc, runId: string): Promise<OverlapSlot> {
    const { mongo } = this.deps;
    for (let i = 0; i < LOCK_ROUNDS; i++) {
      const cur = await readOverlapLock(mongo, job._id);
      if (!cur) return { decision: "SKIP", reason: "job deleted", replaced: null };
      const decision = decideOverlap(job.overlap, { active: cur.active ? 1 : 0, pending: cur.pending ? 1 : 0 });
      if (decision === "SKIP") return { decision, reason: skipReason(cur, job.overlap), replaced: null };
      const set = decision === "HOLD" ? { pendingRunId: runId } : { activeRunId: runId };
      if (await setOverlapLockIf(mongo, job._id, cur, set)) {
        return { decision, reason: "", replaced: decision === "REPLACE" ? cur.active : null };
      }
    }
    throw new ConcurrentChangeError(`job ${job._id}: overlap lock is too contended; try again`);
  }

  /**
   * Frees the job's overlap lock held by `runId` (the run reached a final status, or was never
   * created). When a run was held PENDING behind it (QUEUE_ONE), it takes the lock and is queued.
   */
  async release(jobId: string, runId: string): Promise<void> {
    const { mongo } = this.deps;
    await dropPendingRun(mongo, jobId, runId);
    for (let i = 0; i < LOCK_ROUNDS; i++) {
      const cur = await findPendingBehind(mongo, jobId, runId);
      if (!cur) return;
      const next = cur.pending;
      if (!(await passOverlapLock(mongo, jobId, runId, next))) continue;
      if (next) await this.queuePending(next, `previous run ${runId} finished`);
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

/** Why a fire or trigger is skipped: the run holding the lock, and the one already waiting behind it (QUEUE_ONE). */
function skipReason(cur: { active: string | null; pending: string | null }, policy: string): string {
  const held = cur.active ? `run ${cur.active} is still active` : null;
  const waiting = cur.pending ? `run ${cur.pending} already waits for the lock` : null;
  return `${[held, waiting].filter(Boolean).join(" and ") || "another run holds the lock"} (overlap policy ${policy})`;
}
