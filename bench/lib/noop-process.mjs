/**
 * Stand-in for src/executor/process.ts in the benchmarks' "no-op" executor (see
 * noop-process-hooks.mjs): `runProcess` starts no OS process; it resolves on the next turn of the
 * event loop with exit code 0, so the run is a no-op like BullMQ's empty processor. Everything
 * around it — pull, claim, lease, work dir mkdir/rm, result — is the real executor's code.
 * One thing a no-op can do: a DAG task whose spec sets the variable BENCH_RESULT "writes" its value
 * to KAIROS_RESULT, so the DAG bench can fan out over a list (mapOver) without a process.
 */
import { writeFileSync } from "node:fs";
// One line on stderr so the bench can check the substitution really happened.
process.stderr.write(JSON.stringify({ level: "info", msg: "bench: runProcess is a no-op (bench/lib/noop-process.mjs)" }) + "\n");
export class TailBuffer {
  constructor(cap) {
    this.cap = cap;
    this.total = 0;
  }
  push(chunk) {
    this.total += chunk.length;
  }
  get truncated() {
    return false;
  }
  text() {
    return "";
  }
}

export function commandLine(spec) {
  return spec.argv && spec.argv.length > 0 ? [spec.argv[0], spec.argv.slice(1)] : ["/bin/sh", ["-c", spec.command ?? ""]];
}

export function runProcess(spec, signal) {
  const started = performance.now();
  if (spec?.env?.BENCH_RESULT !== undefined && spec.env.KAIROS_RESULT) writeFileSync(spec.env.KAIROS_RESULT, spec.env.BENCH_RESULT);
  return new Promise((resolve) =>
    setImmediate(() =>
      resolve({
        exitCode: signal?.aborted ? null : 0,
        signal: null,
        timedOut: false,
        aborted: Boolean(signal?.aborted),
        abortReason: null,
        spawnError: null,
        outputTail: "",
        truncated: false,
        outputBytes: 0,
        durationMs: Math.round(performance.now() - started),
      }),
    ),
  );
}
