/**
 * Runs an attempt's process in a slot: the slot's sandbox prepared for the run (its working
 * directories, uid, cgroup, environment), the process spawned under the supervisor's watch, and
 * afterwards the cgroup's usage read, whatever the run left killed, and the slot's directories
 * reset for the next run. The slot is the caller's to free (see Capacity).
 */
import { coerceError } from "../domain/index.js";
import type { Logger } from "../support/index.js";
import { endSpan, runSpan, TraceAttr } from "../support/index.js";
import type { Clock } from "../shared-state/index.js";
import type { RunDoc, RunUsage } from "../domain/index.js";
import { ENDED, type Attempt } from "./attempt.js";
import { dagEnv, givenDagFiles, readDagFiles, readDagResult, type DagFiles, type DagResult } from "./dag-files.js";
import type { DagTaskIo } from "../dag/index.js";
import { SANDBOX_GIVEN, SANDBOX_HOME } from "./sandbox/bwrap.js";
import type { JobKinds } from "./kinds/job-kinds.js";
import { watchIdOf, type Deadlines } from "./deadlines.js";
import type { ResolvedOptions } from "./options.js";
import { notStarted } from "./outcome.js";
import { runProcess, type ProcessResult } from "./process.js";
import type { ProcessEnd } from "./report.js";
import { Sandbox, type PreparedAttempt } from "./sandbox/sandbox.js";

/** An attempt's end, and the slot's clean-up after it (the slot is free once that settled). */
export interface SlotEnd {
  end: ProcessEnd;
  /** Call once: kills what the run left, removes its cgroup, resets the slot's directories. */
  cleanup: () => Promise<void>;
}

export class SlotRunner {
  private sandbox: Sandbox | null = null;

  constructor(private readonly deps: { nodeId: string; clock: Clock; log: Logger; deadlines: Deadlines; kinds: JobKinds; dagIo?: DagTaskIo }) {}

  /** Opens the node's sandbox (slot directories, cgroups, egress); returns what it enforces. */
  open(o: ResolvedOptions): Sandbox {
    this.sandbox = Sandbox.open({
      mode: o.sandbox,
      workRoot: o.workRoot,
      slots: o.slots,
      uidBase: o.sandboxUidBase,
      launcher: o.sandboxLauncher,
      roPaths: o.sandboxRoPaths,
      rwPaths: o.sandboxRwPaths,
      egress: o.sandboxEgress,
      nodeTag: this.deps.nodeId.slice(-8),
      log: this.deps.log,
    });
    return this.sandbox;
  }

  async close(): Promise<void> {
    await this.sandbox?.close();
  }

  /**
   * Runs the attempt of `run` in `slot` until its process ends, and marks it ended. A run that
   * cannot be set up (a cgroup could not be made ...) fails; the node does not.
   */
  async run(a: Attempt, run: RunDoc, slot: number, onOutput?: (chunk: Buffer, stream: "stdout" | "stderr") => void): Promise<SlotEnd> {
    const watchId = watchIdOf(a);
    const { deadlines } = this.deps;
    let result: ProcessResult;
    let usage: RunUsage | null = null;
    let oomKilled = false;
    let endedAt = 0;
    let prepared: PreparedAttempt | null = null;
    let dagResult: DagResult | undefined;
    const started = runSpan("kairos.start", run, { [TraceAttr.token]: a.token }); // ends at the spawn (an HTTP job: its response)
    try {
      // An HTTP job runs no process: the executor makes its request (a DAG task of this kind gets no inputs and gives no result).
      if (run.spec.kind === "HTTP") return { end: await this.runHttp(a, run), cleanup: () => this.cleanup(slot, null) };
      const dagFiles = await readDagFiles(this.deps.dagIo, run).catch((e: unknown) => {
        throw new Error(`could not read the DAG task's inputs: ${coerceError(e).message}`);
      });
      prepared = this.prepare(a, run, slot, dagFiles);
      const p = prepared;
      await this.deps.kinds.install(run, p.process.cwd);
      result = await runProcess(
        { ...p.process, timeoutMs: run.spec.timeoutMs, onSpawn: (pid) => (endSpan(started), deadlines.watch(watchId, pid, p, a.killAt)), onOutput },
        a.abort,
      );
      if (run.dagRunId && result.exitCode === 0) dagResult = readDagResult(p.process.cwd);
    } catch (e) {
      endSpan(started, undefined, e);
      result = notStarted(`could not set up the run${prepared ? "'s program" : "'s sandbox"}: ${coerceError(e).message}`);
    } finally {
      endSpan(started);
      a.process = ENDED;
      endedAt = this.deps.clock();
      const forgotten = deadlines.forget(watchId);
      // Killed: by the supervisor (its disk cap, its deadline)? Its word arrives on its own pipe,
      // maybe after the exit: wait for it, so the end is reported with its cause.
      if (result! !== undefined && result.signal !== null && !a.killedBy) await forgotten;
      if (prepared?.cgroup) {
        const u = prepared.cgroup.usage();
        usage = { peakMemoryMb: u.peakMemoryMb, cpuSeconds: u.cpuSeconds };
        oomKilled = u.oomKilled;
      }
    }
    const cgroup = prepared?.cgroup ?? null;
    return { end: { result, usage, oomKilled, endedAt, ...(dagResult ? { dagResult } : {}) }, cleanup: () => this.cleanup(slot, cgroup) };
  }

  /**
   * What the ended attempt may have left: every process still in its cgroup killed, the cgroup
   * removed, the slot's directories made afresh. Its end is reported meanwhile (a DAG task's
   * children wait for that report, not for this); the slot is taken again only after it.
   */
  private async cleanup(slot: number, cgroup: PreparedAttempt["cgroup"] | null): Promise<void> {
    // Off the event loop (libuv's pool): the attempt's end is being reported meanwhile, and its
    // answer must not wait for these syscalls (issue #27). `?.`: bench/lib/noop-sandbox.mjs's
    // releaseSlot answers nothing; a throw here would leave the slot taken for good.
    await cgroup?.release().catch((e: unknown) => this.deps.log.error({ err: coerceError(e), slot }, "could not remove an attempt's cgroup"));
    await this.sandbox!.releaseSlot(slot)?.catch((e) => this.deps.log.error({ err: coerceError(e), slot }, "could not reset a slot's directories"));
  }

  private async runHttp(a: Attempt, run: RunDoc): Promise<ProcessEnd> {
    const result = await this.deps.kinds.runHttp(run, a.token, a.abort);
    return { result, usage: null, oomKilled: false, endedAt: this.deps.clock() };
  }

  /** The attempt's sandbox in `slot`: its program, environment, limits and directories (with a DAG task's files written). */
  private prepare(a: Attempt, run: RunDoc, slot: number, dagFiles: DagFiles | null): PreparedAttempt {
    const dag = dagFiles !== null;
    const kairosEnv: Record<string, string> = {
      KAIROS_RUN_ID: run._id,
      KAIROS_JOB_ID: run.jobId,
      KAIROS_ATTEMPT: String(run.attempt),
      KAIROS_FENCING_TOKEN: String(a.token),
      KAIROS_SCHEDULED_FOR: run.scheduledFor.toISOString(),
      KAIROS_NODE_ID: this.deps.nodeId,
    };
    // A DAG task's files: its result in its working directory (/work inside bubblewrap), its inputs and params in the slot's given directory (/kairos).
    if (dag && this.sandbox!.mode === "bubblewrap") Object.assign(kairosEnv, dagEnv(SANDBOX_HOME, SANDBOX_GIVEN, run));
    const prepared = this.sandbox!.prepare(slot, `${run._id}-${a.token}`, this.deps.kinds.sandboxSpec(run.spec), kairosEnv, a.resources, dag ? givenDagFiles(dagFiles) : {});
    if (dag && this.sandbox!.mode !== "bubblewrap") Object.assign(prepared.process.env, dagEnv(prepared.process.cwd, prepared.given.inside, run));
    return prepared;
  }
}
