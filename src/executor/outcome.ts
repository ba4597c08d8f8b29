/**
 * What an attempt's end means for its run: the outcome RunService records (status, error text),
 * from the process's result and what the node saw (cancel, OOM kill, disk cap). One place for the
 * error texts users read in `run { error }`.
 */
import type { AttemptOutcome } from "../core/index.js";
import type { HttpResponseRecord, ResourceRequest, RunUsage } from "../domain/index.js";
import { startFailureError } from "./start-failure.js";

/** What an HTTP job's attempt adds to its result (executor/kinds/http-job.ts). */
export interface HttpAttemptResult {
  response: HttpResponseRecord | null;
  /** The request got a success status. */
  succeeded: boolean;
  /** Whether a failure may be retried (by the job's retry policy). */
  retryable: boolean;
  /** Why it failed, in words; null on success. */
  error: string | null;
}

/** What running a program gave: how it ended and the tail of its output. */
export interface ProcessResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Killed because the caller aborted (cancel, lost lease, shutdown). */
  aborted: boolean;
  abortReason: string | null;
  /** Set when the program could not be started at all (no such file, not executable ...). */
  spawnError: string | null;
  outputTail: string;
  /** True when output beyond the kept tail was dropped. */
  truncated: boolean;
  outputBytes: number;
  durationMs: number;
  /** HTTP jobs only: the request's result (no process ran). */
  http?: HttpAttemptResult;
}

export interface EndCause {
  cancelled: boolean;
  /** The kernel's OOM killer ended a process of the run (its cgroup says so). */
  oomKilled: boolean;
  /** The supervisor killed it for writing more than its disk cap. */
  diskFull: boolean;
  resources: ResourceRequest;
}

export function toOutcome(r: ProcessResult, cause: EndCause, endedAt: number, usage: RunUsage | null): AttemptOutcome {
  if (r.http) return httpOutcome(r, r.http, cause, endedAt);
  const common = { exitCode: r.exitCode, signal: r.signal, outputTail: r.outputTail, outputTruncated: r.truncated, endedAt, usage };
  if (cause.cancelled) return { ...common, kind: "CANCELLED", error: "cancelled" };
  if (r.spawnError) return { ...common, kind: "FAILED", error: `could not start the program: ${r.spawnError}` };
  if (r.timedOut) return { ...common, kind: "TIMED_OUT", error: `timed out after ${r.durationMs} ms` };
  if (cause.diskFull) return { ...common, kind: "FAILED", error: `DISK_LIMIT: the run wrote more than its disk cap (diskMb ${cause.resources.diskMb}) in its working directory and /tmp, and was killed` };
  if (r.exitCode === 0) return { ...common, kind: "SUCCEEDED", error: null };
  if (cause.oomKilled) return { ...common, kind: "OOM_KILLED", error: `OOM_KILLED: the run went over its memory limit (memoryMb ${cause.resources.memoryMb}) and the kernel killed it` };
  // 125 is the sandbox wrapper's own failure; 126/127 the shell's "cannot execute" / "not found"
  // (the launcher's too), with the program named when the output says which.
  const why =
    r.exitCode === 127 || r.exitCode === 126
      ? startFailureError(r.exitCode, r.outputTail)
      : r.exitCode === 125
        ? "exit code 125: the run's sandbox could not be set up (or the program itself exited 125)"
        : r.exitCode !== null
          ? `exit code ${r.exitCode}`
          : `killed by ${r.signal}`;
  return { ...common, kind: "FAILED", error: why };
}

/** The result of an attempt whose program never started (spawn refused it, or its sandbox could not be set up). */
export function notStarted(message: string, durationMs = 0): ProcessResult {
  return { exitCode: null, signal: null, timedOut: false, aborted: false, abortReason: null, spawnError: message, outputTail: "", truncated: false, outputBytes: 0, durationMs };
}

/** An HTTP attempt's outcome: its response on the run, and whether a failure may be retried. */
function httpOutcome(r: ProcessResult, h: HttpAttemptResult, cause: EndCause, endedAt: number): AttemptOutcome {
  const common = { exitCode: null, signal: null, outputTail: r.outputTail, outputTruncated: false, endedAt, usage: null, httpResponse: h.response };
  if (cause.cancelled) return { ...common, kind: "CANCELLED", error: "cancelled" };
  if (r.timedOut) return { ...common, kind: "TIMED_OUT", error: h.error ?? `timed out after ${r.durationMs} ms` };
  if (h.succeeded) return { ...common, kind: "SUCCEEDED", error: null };
  return { ...common, kind: "FAILED", error: h.error, retryable: h.retryable };
}
