import type { HttpResponseRecord, RunUsage } from "../../domain/index.js";
import type { Logger } from "../../support/index.js";
import type { Clock, SharedState } from "../../shared-state/index.js";
import type { Mongo } from "../../store/index.js";

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
}

export interface RunServiceDeps {
  mongo: Mongo;
  state: SharedState;
  clock: Clock;
  log: Logger;
  /** Source of randomness for retry jitter. @default Math.random */
  random?: () => number;
}
