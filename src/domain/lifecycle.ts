/**
 * The run lifecycle in one table (docs/design.md, "Run lifecycle"). Every status change of a run goes through
 * {@link assertTransition}; anything the table does not list is refused with an error naming both
 * states.
 *
 *   PENDING → QUEUED → RUNNING → SUCCEEDED | FAILED | TIMED_OUT | CANCELLED
 *                         ↘ RETRY_SCHEDULED → QUEUED …     ↘ DEAD (after the last attempt)
 */
import { InvalidTransitionError } from "./errors.js";

export const RunStatus = {
  /** Waiting: a DAG task on its parents, or a run held behind an active one (overlap QUEUE_ONE). */
  PENDING: "PENDING",
  /** In a ready queue, waiting for an executor slot. */
  QUEUED: "QUEUED",
  /** Claimed by an executor under a lease and a fencing token. */
  RUNNING: "RUNNING",
  SUCCEEDED: "SUCCEEDED",
  /** The program failed and no retry follows (no retries configured, or a non-retryable exit code). */
  FAILED: "FAILED",
  /** Killed at its timeout and no retry follows. */
  TIMED_OUT: "TIMED_OUT",
  CANCELLED: "CANCELLED",
  /** An attempt failed; the next one is armed on the time wheel. */
  RETRY_SCHEDULED: "RETRY_SCHEDULED",
  /** Dead letter: every configured attempt failed. Listed by `deadLetters`, re-run by `retryRun`. */
  DEAD: "DEAD",
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

const S = RunStatus;

const TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  [S.PENDING]: [S.QUEUED, S.CANCELLED],
  [S.QUEUED]: [S.RUNNING, S.CANCELLED, S.PENDING],
  // RUNNING → QUEUED: an executor draining on SIGTERM hands its run back, or a lost lease is re-queued.
  [S.RUNNING]: [S.SUCCEEDED, S.FAILED, S.TIMED_OUT, S.CANCELLED, S.RETRY_SCHEDULED, S.DEAD, S.QUEUED],
  [S.RETRY_SCHEDULED]: [S.QUEUED, S.CANCELLED],
  [S.SUCCEEDED]: [],
  // Terminal failures can be re-run by hand (`retryRun`): queued, or PENDING behind the run
  // holding the job's overlap lock (QUEUE_ONE).
  [S.FAILED]: [S.QUEUED, S.PENDING],
  [S.TIMED_OUT]: [S.QUEUED, S.PENDING],
  [S.CANCELLED]: [S.QUEUED, S.PENDING],
  [S.DEAD]: [S.QUEUED, S.PENDING],
};

export const TERMINAL_STATUSES: readonly RunStatus[] = [S.SUCCEEDED, S.FAILED, S.TIMED_OUT, S.CANCELLED, S.DEAD];
/** Statuses of a run that is still going to do something. */
export const OPEN_STATUSES: readonly RunStatus[] = [S.PENDING, S.QUEUED, S.RUNNING, S.RETRY_SCHEDULED];

export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** Statuses from which `to` may be reached: the filter of a conditional update. */
export function sourcesOf(to: RunStatus): RunStatus[] {
  return (Object.keys(TRANSITIONS) as RunStatus[]).filter((from) => TRANSITIONS[from].includes(to));
}

export function assertTransition(runId: string, from: RunStatus, to: RunStatus): void {
  if (!canTransition(from, to)) throw new InvalidTransitionError(runId, from, to);
}

export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/**
 * The run statuses clients see: the stored ones plus three that the store keeps as flags:
 * - CANCELLING: a RUNNING run whose cancellation was asked for (stored RUNNING with
 *   `cancelRequested: true`) until its executor records the end;
 * - SCHEDULED: a run staged ahead of its fire time (stored QUEUED with `notBefore` still to come):
 *   it exists, its slot has fired, but no executor may take it yet. At `notBefore` it reads QUEUED
 *   (no write happens then: the next event is RUNNING);
 * - WITHDRAWN: a staged run taken back before its fire time by a pause or an edit (stored
 *   CANCELLED with `withdrawn: true`): it never ran, and its slot was judged again.
 * Filtering by any of them is the inverse (store/runs/user-reads.ts, statusFilter).
 */
export const ReportedRunStatus = { ...RunStatus, CANCELLING: "CANCELLING", SCHEDULED: "SCHEDULED", WITHDRAWN: "WITHDRAWN" } as const;
export type ReportedRunStatus = (typeof ReportedRunStatus)[keyof typeof ReportedRunStatus];

/** The status a run is reported with at `now` (epoch ms). */
export function reportedStatus(
  run: { status: RunStatus; cancelRequested?: boolean; notBefore?: Date | null; withdrawn?: boolean },
  now: number,
): ReportedRunStatus {
  switch (run.status) {
    case RunStatus.RUNNING:
      return run.cancelRequested ? ReportedRunStatus.CANCELLING : run.status;
    case RunStatus.QUEUED:
      return run.notBefore && run.notBefore.getTime() > now ? ReportedRunStatus.SCHEDULED : run.status;
    case RunStatus.CANCELLED:
      return run.withdrawn ? ReportedRunStatus.WITHDRAWN : run.status;
    default:
      return run.status;
  }
}
