/** What the job service takes and gives: inputs, options, outcomes and its dependencies. */
import type { Principal } from "../../auth/index.js";
import type { Logger } from "../../support/index.js";
import type { Clock, SharedState } from "../../shared-state/index.js";
import type { MisfirePolicy, OverlapPolicy, RetryInput, ScheduleInput } from "../../timing/index.js";
import type { Mongo } from "../../store/index.js";
import type { JobDoc, RunDoc } from "../../domain/index.js";
import type { IdempotencyOptions } from "../idempotency.js";
import type { PoolCoverage } from "../pools.js";
import type { RunService } from "../runs/index.js";
import type { JobSpecInput } from "../spec.js";
import type { ArtifactLookup } from "../job-kinds.js";

export interface JobInput {
  name: string;
  description?: string | null;
  tags?: string[] | null;
  schedule: ScheduleInput;
  spec: JobSpecInput;
  priority?: number | null;
  retry?: RetryInput | null;
  overlap?: OverlapPolicy | null;
  misfire?: MisfirePolicy | null;
  catchupWindow?: string | null;
  paused?: boolean | null;
  /** Internal: the job is the timer of this DAG (src/dag); set only by the DAG engine, never from the API. */
  dagId?: string | null;
}

export type { JobSpecInput };

export type JobPatch = Partial<JobInput>;

/**
 * The DAG engine acting on DAG `timerOf`'s timer job (the job that carries the DAG's schedule, id
 * = the DAG's): not a user, so no principal; it reaches that job only, and no user reaches it.
 */
export interface DagTimerActor {
  readonly timerOf: string;
  /** The DAG's owner, who owns its timer job. */
  readonly ownerId: string;
}

/** Who changes a job: a user (their own jobs, never a timer job), or the DAG engine on its DAG's timer job. */
export type JobActor = Principal | DagTimerActor;

/** What happens to a deleted user's jobs: kept paused (owner marked deleted) or removed. */
export type OwnerJobs = "KEEP" | "DELETE";

/** Options of a submission: the same idempotency key within 24 h returns the first result. */
export interface Submit {
  idempotencyKey?: string | null;
  /**
   * Takes what the call's runs are worth from the caller's submission budget (the API's), once
   * it is known how many it makes and before any is made; throws to refuse the call. A replay of
   * an idempotency key makes nothing and is not asked again.
   */
  admit?: (runs: number, why: string) => Promise<void>;
  /** Internal: the id to create the job with (a DAG's timer job takes its DAG's id). */
  id?: string;
  /**
   * Internal: asked once the job is stored and before its timer is armed; false leaves it unarmed
   * (a DAG's timer whose DAG was paused meanwhile: the caller pauses it, and nothing was staged).
   */
  armIf?: () => Promise<boolean>;
}

export interface BackfillOutcome {
  requested: number;
  created: RunDoc[];
  existing: number;
}

export interface JobServiceDeps {
  mongo: Mongo;
  state: SharedState;
  runs: RunService;
  clock: Clock;
  log: Logger;
  defaultCatchupWindowMs: number;
  /** The schedulers' stage-ahead window (SchedulerOptions.stageAheadMs): timers are armed that much early. @default 10 s */
  stageAheadMs?: number;
  random?: () => number;
  idempotency?: IdempotencyOptions;
  /** Which pools executors serve (a job's health). Default: one of its own. */
  pools?: PoolCoverage;
  /** Resolves the artifacts SCRIPT and BINARY specs name (the artifacts service); absent: such specs are refused, saying why. */
  artifacts?: ArtifactLookup | null;
  /** Told of a job stored with a recurring schedule (core/alerts AlertSilences.watchJob); absent: nobody is. */
  recurring?: RecurringJobWatch;
}

/**
 * Told once a job is stored with a recurring schedule, made so or changed to one (a DAG's timer job
 * too): the SCHEDULE_SILENT rules on all of its owner's jobs watch it. Best effort: a failure is
 * logged, and the schedulers' reconciler arms a watch this missed. And told once a job is deleted:
 * its watches end then (a failure: at their next check).
 */
export interface RecurringJobWatch {
  watchJob(job: JobDoc): Promise<void>;
  unwatchJob?(job: Pick<JobDoc, "_id" | "ownerId" | "dagId">): Promise<void>;
}
