import type { HttpResponseRecord, JobDoc, RunDoc, RunStatus, RunTrigger, RunUsage } from "../../domain/index.js";
import type { Logger } from "../../support/index.js";
import type { Clock, SharedState } from "../../shared-state/index.js";
import type { Mongo } from "../../store/index.js";
import type { LockSubject } from "./overlap.js";
import type { StagedFires } from "./staged.js";

export interface AttemptOutcome {
  /** OOM_KILLED: the kernel killed the run for exceeding its memory limit (recorded as FAILED, retried per `retry.retryOnOomKill`). */
  kind: "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "CANCELLED" | "LOST_EXECUTOR" | "OOM_KILLED";
  exitCode: number | null;
  signal: string | null;
  error: string | null;
  outputTail: string | null;
  outputTruncated: boolean;
  /** What the attempt used (peak memory, CPU seconds), where the node measures it. */
  usage?: RunUsage | null;
  /** HTTP jobs: what the request got back (null: no response). Absent for programs. */
  httpResponse?: HttpResponseRecord | null;
  /**
   * False: the failure is final whatever the retry policy says (an HTTP 4xx, a request refused by
   * the SSRF rules). Absent: the policy decides.
   */
  retryable?: boolean;
  /**
   * When the program ended (epoch ms), if the result is recorded later: the executor holds
   * results while it is starting due runs (see ReportGate in executor/report.ts). The run's `finishedAt` and
   * the history entry say when it ended, not when it was written down. Default: now.
   */
  endedAt?: number;
  /** A DAG task's result (the JSON text it wrote to KAIROS_RESULT), when it succeeded and wrote one. */
  resultJson?: string | null;
}

export interface RunServiceDeps {
  mongo: Mongo;
  state: SharedState;
  clock: Clock;
  log: Logger;
  /** Source of randomness for retry jitter. @default Math.random */
  random?: () => number;
  /**
   * The most runs one user may have waiting to start (QUEUED or PENDING), null: no bound.
   * `KAIROS_MAX_WAITING_RUNS` (see waiting.ts). @default null
   */
  maxWaitingRuns?: number | null;
}

/** What the DAG engine answers for a fire of a DAG's timer job. */
export interface DagFired {
  /** The DAG run made (or found: a replayed fire), null when skipped. */
  dagRunId: string | null;
  created: boolean;
  skipped: string | null;
  /** Skipped because the owner's runs waiting to start leave no room for the DAG run's first tasks (SKIPPED_BACKLOG). */
  backlog?: boolean;
}

export interface DagFireLock {
  /** Takes the timer job's overlap lock for `dagRunId`, a skip worded for `subject` (see OverlapLocks.take). */
  take(dagRunId: string, subject: LockSubject): Promise<{ decision: "START" | "HOLD" | "SKIP" | "REPLACE"; reason: string; replaced: string | null }>;
  release(dagRunId: string, subject: LockSubject): Promise<void>;
}

/**
 * What core asks of the DAG engine, as one port: src/dag implements it (DagEngine), and app/
 * connects it once both are built (RunService.connectDags); core does not import dag/. Until it is
 * connected (a process without DAGs, some tests) a DAG task's end advances nothing and a DAG
 * timer's fire makes nothing.
 */
export interface DagPort {
  /**
   * A DAG task instance's run reached a final status (SUCCEEDED, FAILED, TIMED_OUT, CANCELLED,
   * DEAD), wherever that transition was written: its DAG run advances. Must not throw.
   */
  taskEnded(run: RunDoc): Promise<void>;
  /**
   * An executor's result is about to move a DAG task instance's run to the final status `to` (the
   * write is in flight, and may yet be refused): the DAG run may be read meanwhile, so the advance
   * that follows (taskEnded) does not wait for that read. Must not throw.
   */
  taskEnding(run: RunDoc, to: RunStatus): void;
  /** A scheduled DAG's timer job (`dagId` set) fired: the DAG run for the fire instead of a run, under the timer job's overlap lock. */
  fire: DagFireHook;
  /** A DAG's timer job's staged fires: its DAG runs (see StagedRuns.withdraw). */
  readonly staged: StagedFires;
}

export type DagFireHook = (job: JobDoc, fire: { fireKey: string; scheduledFor: number; trigger: RunTrigger; notBefore: number | null; ignoreOverlap: boolean }, lock: DagFireLock) => Promise<DagFired>;
