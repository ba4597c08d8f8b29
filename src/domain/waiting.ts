/**
 * Why a run has not started, or a job is not producing runs now (`Run.waiting`, `Job.problems`,
 * `DagRunTask.waiting`; docs/waiting.md). Computed by core/waits/ from the state the scheduler,
 * the executors' claims and the DAG engine decide on; the codes are the GraphQL enum `WaitCode`.
 */
export const WaitCode = {
  /** The job (or DAG) is paused: no fire is made until it is resumed. */
  PAUSED: "PAUSED",
  /** The owner's `maxConcurrentRuns` slots are all held by RUNNING runs: the run is parked until one ends. */
  USER_CONCURRENCY_LIMIT: "USER_CONCURRENCY_LIMIT",
  /** No ONLINE executor pulls from the run's pool (or has its script interpreter). */
  POOL_UNSERVED: "POOL_UNSERVED",
  /** Due and in the ready queue of a served pool, waiting for a free executor slot there. */
  POOL_BUSY: "POOL_BUSY",
  /** A DAG task whose parents have not all ended. */
  WAITING_ON_PARENT: "WAITING_ON_PARENT",
  /** A DAG task ready to start while its DAG run has `maxParallel` tasks queued or running. */
  MAX_PARALLEL: "MAX_PARALLEL",
  /** The overlap policy: held PENDING behind the job's active run (QUEUE_ONE), or fires skipped (FORBID, QUEUE_ONE full). */
  OVERLAP: "OVERLAP",
  /** The misfire policy did not run the job's last slot (it was late: outside the catch-up window, collapsed, over the cap). */
  MISFIRE: "MISFIRE",
  /** The owner has as many runs waiting to start as KAIROS_MAX_WAITING_RUNS allows: fires are skipped. */
  BACKLOG: "BACKLOG",
  /** The owner's submission budget (KAIROS_RATE_SUBMISSIONS) is spent: triggers, backfills and retries are refused until it refills. */
  RATE_LIMITED: "RATE_LIMITED",
  /** Staged ahead of its slot: no executor takes it before its due time. */
  NOT_DUE: "NOT_DUE",
  /** An attempt failed; the next one is armed for `retryAt`. */
  RETRY_BACKOFF: "RETRY_BACKOFF",
  /** The job's last slot did not exist on the wall clock (spring forward) and the schedule skips such slots. */
  DST_SKIPPED: "DST_SKIPPED",
  /** The schedule has no fires left (a ONCE that fired, maxFires reached, past endAt). */
  NO_MORE_FIRES: "NO_MORE_FIRES",
  /** The job's owner was deleted; the job was kept paused and can no longer be resumed or triggered. */
  OWNER_DELETED: "OWNER_DELETED",
} as const;
export type WaitCode = (typeof WaitCode)[keyof typeof WaitCode];

/** One reason, as the API answers it. */
export interface WaitReason {
  code: WaitCode;
  /** What holds it and what to do about it, in words. */
  message: string;
  /** Since when it holds, when known. */
  since: Date | null;
  /** When it is expected to stop holding by itself (a retry's time, a staged run's due time, a budget's refill), when known. */
  until: Date | null;
}

/**
 * Why a fire was SKIPPED_BACKLOG (a job's or a scheduled DAG's): the owner's runs waiting to start
 * against the bound. `runs` is how many the fire would have added at once: a job's fire one run,
 * a scheduled DAG run one per first task (said when more than one).
 */
export function backlogSkipReason(waiting: number, max: number | null, runs = 1): string {
  const over = runs === 1 ? "" : `, and this DAG run's ${runs} first tasks would take it over the bound`;
  return `the owner had ${waiting} runs waiting to start${over} (KAIROS_MAX_WAITING_RUNS=${max})`;
}
