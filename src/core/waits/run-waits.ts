/**
 * Why a run has not started (`Run.waiting`), from the run as stored and the facts the claim path
 * decides on: its owner's run slots (core/runs/user-slots.ts), whether its ready queue is served
 * (core/pools.ts), the run holding its job's overlap lock (core/runs/overlap.ts). Pure: the facts
 * are read by {@link WaitReads}. Empty for a run that started or ended.
 */
import type { RunDoc, WaitReason } from "../../domain/index.js";
import { poolOfQueue, RunStatus, WaitCode } from "../../domain/index.js";

export interface RunWaitFacts {
  now: number;
  /** The owner's `maxConcurrentRuns` and the slots RUNNING runs hold; null: no limit. */
  owner: { limit: number; taken: number } | null;
  /** Why no online executor takes runs from the run's ready queue; null when one does. */
  unserved: string | null;
  /** Online executors serving the run's ready queue. */
  servingNodes: number;
  /** A PENDING run: the run holding its job's overlap lock, and its status (null: the lock is free or unknown). */
  ahead: { id: string; status: string } | null;
}

/** What a run waits in: PENDING, QUEUED, RETRY_SCHEDULED. */
export const WAITING_RUN_STATUSES: ReadonlySet<string> = new Set([RunStatus.PENDING, RunStatus.QUEUED, RunStatus.RETRY_SCHEDULED]);

type WaitingRun = Pick<RunDoc, "_id" | "status" | "pool" | "overlap" | "attempt" | "queuedAt" | "scheduledFor" | "notBefore" | "retryAt" | "heldByLimit" | "heldAt" | "error" | "exitCode" | "history" | "retry" | "cancelRequested">;

const at = (d: Date | null | undefined) => (d ? d.toISOString() : "?");

export function runWaits(run: WaitingRun, f: RunWaitFacts): WaitReason[] {
  if (!WAITING_RUN_STATUSES.has(run.status) || run.cancelRequested) return [];
  const out: WaitReason[] = [];
  const pool = poolOfQueue(run.pool);
  if (run.status === RunStatus.RETRY_SCHEDULED) {
    const since = [...run.history].reverse().find((h) => h.status === RunStatus.RETRY_SCHEDULED)?.at ?? null;
    const failed = run.error ? ` (${run.error})` : run.exitCode != null ? ` (exit code ${run.exitCode})` : "";
    out.push({
      code: WaitCode.RETRY_BACKOFF,
      message:
        `attempt ${run.attempt} of ${run.retry.maxAttempts} failed${failed}; attempt ${run.attempt + 1} is due at ${at(run.retryAt)} (the job's retry backoff). ` +
        "Nothing to do to let it run then; cancelRun stops it, and the job's retry policy (backoff, maxAttempts) sets the waits of future runs",
      since,
      until: run.retryAt ?? null,
    });
  }
  if (run.status === RunStatus.PENDING) {
    const ahead = f.ahead ? `run ${f.ahead.id} (${f.ahead.status})` : "the run holding the job's overlap lock";
    out.push({
      code: WaitCode.OVERLAP,
      message:
        `held PENDING behind ${ahead} by the job's overlap policy ${run.overlap}: it is queued as soon as that run ends. ` +
        "To start it sooner, cancel the run ahead (cancelRun), or set the job's overlap to ALLOW to let runs overlap",
      since: run.queuedAt ?? lastEntry(run, RunStatus.PENDING),
      until: null,
    });
  }
  if (run.status === RunStatus.QUEUED) {
    const dueAt = run.notBefore && run.notBefore.getTime() > f.now ? run.notBefore : null;
    if (dueAt) {
      out.push({
        code: WaitCode.NOT_DUE,
        message: `staged ahead of its slot ${at(run.scheduledFor)}: no executor takes it before ${at(dueAt)}. To run the job now instead, triggerJob`,
        since: run.queuedAt,
        until: dueAt,
      });
    }
    if (f.unserved) {
      out.push({
        code: WaitCode.POOL_UNSERVED,
        message: `${f.unserved}. Start an executor with KAIROS_POOLS including "${pool}", or change the job's spec.pool to a served one (updateJob; runs made before keep theirs)`,
        since: dueAt ? null : run.queuedAt,
        until: null,
      });
    }
    if (!dueAt && f.owner && (run.heldByLimit || f.owner.taken >= f.owner.limit)) {
      out.push({
        code: WaitCode.USER_CONCURRENCY_LIMIT,
        message:
          `your concurrency limit is reached: ${f.owner.taken} of your ${f.owner.limit} run slots (maxConcurrentRuns) are held by RUNNING runs` +
          `${run.heldByLimit ? "; the run is parked out of the queue" : ""} and goes back in line, oldest first, when one of them ends. ` +
          "Cancel a running run to free a slot, or ask an administrator to raise your maxConcurrentRuns (setUserConcurrencyLimit)",
        since: run.heldByLimit ? (run.heldAt ?? null) : null,
        until: null,
      });
    }
    if (!dueAt && out.length === 0) {
      out.push({
        code: WaitCode.POOL_BUSY,
        message:
          `queued in pool "${pool}" for a free executor slot (${f.servingNodes} online executor${f.servingNodes === 1 ? "" : "s"} serve${f.servingNodes === 1 ? "s" : ""} it); ` +
          "runs start by priority, then oldest first, taking turns between owners. Add executors to the pool (KAIROS_POOLS) or raise their KAIROS_EXECUTOR_CAPACITY if this lasts",
        since: maxDate(run.queuedAt, run.notBefore ?? null),
        until: null,
      });
    }
  }
  return out;
}

function lastEntry(run: Pick<RunDoc, "history">, status: string): Date | null {
  return [...run.history].reverse().find((h) => h.status === status)?.at ?? null;
}

function maxDate(a: Date | null, b: Date | null): Date | null {
  if (!a) return b;
  if (!b) return a;
  return a > b ? a : b;
}
