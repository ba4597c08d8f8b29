/**
 * Runs one attempt's process (the sandbox wrapper, or an unsandboxed program in its own process
 * group), collects its output tail, and stops it on timeout or abort: SIGTERM to the program, then
 * SIGKILL to everything it started. Deadlines that must hold while the executor is frozen are the
 * supervisor's (sandbox/supervisor.ts), not this module's.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { constants } from "node:os";
import type { AbortLike } from "./abort.js";
import { notStarted, type ProcessResult } from "./outcome.js";
import type { LaunchEnd, Launcher, LaunchRequest } from "./sandbox/launcher.js";
import { TailBuffer } from "./tail-buffer.js";

export type { ProcessResult };
export { TailBuffer };

export interface ProcessSpec {
  /** What to spawn: the sandbox's wrapper (see sandbox/bwrap.ts), or the program itself. */
  file: string;
  args: string[];
  /** The spawned process's environment (the program's own, for an unsandboxed run). */
  env: Record<string, string>;
  cwd: string;
  timeoutMs: number;
  /** After SIGTERM, how long before SIGKILL. @default 5 s */
  killGraceMs?: number;
  /** Bytes of combined stdout/stderr kept (the tail). @default 16 KiB */
  tailBytes?: number;
  /**
   * How the run is stopped. `group` (an unsandboxed program): SIGTERM then SIGKILL to its process
   * group. `sandbox`: SIGTERM to the program inside (the main process, as a container runtime
   * does), then SIGKILL to the sandbox, whose PID namespace takes every process of the run with it.
   * @default group
   */
  stop?: "group" | "sandbox";
  /** Called with the spawned process's pid, before any output (the executor's supervisor watches it). */
  onSpawn?: (pid: number) => void;
  /** Live output, for log streaming. */
  onOutput?: (chunk: Buffer, stream: "stdout" | "stderr") => void;
  /**
   * Start it through the node's launcher, in its slot's long-lived sandbox (sandbox/launcher.ts),
   * rather than spawning `file`: no fork on the event loop, no bubblewrap per run. Stops as
   * `sandbox` does: SIGTERM reaches the program, SIGKILL the whole run.
   */
  launch?: { launcher: Launcher; request: LaunchRequest };
}

/**
 * The program's pid inside a sandbox: bubblewrap (the spawned pid) forks the namespace's init, which
 * forks the program. Null when it is not (or no longer) there.
 */
function sandboxedProgram(outer: number): number | null {
  const childOf = (pid: number): number | null => {
    try {
      const first = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(" ")[0];
      return first ? Number(first) : null;
    } catch {
      return null;
    }
  };
  const init = childOf(outer);
  return init === null ? null : childOf(init);
}

/**
 * Stops a spawned run: `terminate` sends SIGTERM to the program (its process group, or the program
 * inside the sandbox) and SIGKILL to everything `graceMs` later; `killAll` sends SIGKILL at once.
 */
function stopperFor(child: ChildProcess, mode: "group" | "sandbox", graceMs: number, sent: Set<StopSignal>) {
  let killTimer: NodeJS.Timeout | undefined;
  // `stopping`: a stop of the run (recorded); otherwise the clean-up of what an ended group left.
  const kill = (stopping: boolean) => {
    if (child.pid === undefined) return;
    if (stopping) sent.add("SIGKILL");
    try {
      // The group, or the sandbox (its PID namespace ends with it).
      process.kill(mode === "group" ? -child.pid : child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  const killAll = () => kill(true);
  const terminate = () => {
    if (child.pid !== undefined) {
      const target = mode === "group" ? -child.pid : sandboxedProgram(child.pid);
      if (target !== null) sent.add("SIGTERM");
      try {
        if (target !== null) process.kill(target, "SIGTERM");
      } catch {
        // already gone
      }
    }
    killTimer ??= setTimeout(killAll, graceMs);
  };
  const clear = () => {
    if (killTimer) clearTimeout(killTimer);
  };
  return { killAll, terminate, clear, cleanUp: () => kill(false) };
}

/** A started run, however it was started: how to stop it. */
interface Running {
  terminate(): void;
  killAll(): void;
  clear(): void;
}

/** The signals a run is stopped with. */
type StopSignal = "SIGTERM" | "SIGKILL";

/**
 * How the run ended, as reported: the signal it died of, or the stop signal it was sent (a timeout,
 * a cancel) when it ended of that. A bubblewrap of its own (`wrapped`) reports its program's death
 * by signal N as exit code 128+N: a stop signal of ours read back from that is the signal, with no
 * exit code, as the launcher reports it. A program that caught the stop signal and exited itself
 * keeps its exit code, with the signal it was sent.
 */
export function endedBy(code: number | null, signal: string | null, sent: ReadonlySet<StopSignal>, wrapped: boolean): { exitCode: number | null; signal: string | null } {
  if (signal !== null || sent.size === 0) return { exitCode: code, signal };
  if (wrapped) {
    for (const s of sent) if (code === 128 + constants.signals[s]) return { exitCode: null, signal: s };
  }
  return { exitCode: code, signal: sent.has("SIGKILL") ? "SIGKILL" : "SIGTERM" };
}

interface Sink {
  /** The stop signals sent to the run so far. */
  sent: Set<StopSignal>;
  onPid(pid: number): void;
  onData(chunk: Buffer, stream: "stdout" | "stderr"): void;
  onEnd(code: number | null, signal: string | null, spawnError: string | null): void;
}

export function runProcess(spec: ProcessSpec, signal: AbortLike): Promise<ProcessResult> {
  const started = performance.now();
  const tail = new TailBuffer(spec.tailBytes ?? 16 * 1024);

  return new Promise((resolve) => {
    // What happened to the run besides its exit, as the result reports it.
    const seen = { timedOut: false, aborted: false, abortReason: null as string | null, spawnError: null as string | null };
    let timeout: NodeJS.Timeout | undefined;
    const onAbort = () => {
      seen.aborted = true;
      seen.abortReason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? "aborted");
      running?.terminate();
    };
    const sink: Sink = {
      sent: new Set(),
      onPid: (pid) => spec.onSpawn?.(pid),
      onData: (chunk, stream) => {
        tail.push(chunk, stream);
        spec.onOutput?.(chunk, stream);
      },
      onEnd: (code, sig, spawnError) => {
        clearTimeout(timeout);
        running?.clear();
        signal.removeEventListener("abort", onAbort);
        if (spawnError) seen.spawnError = spawnError;
        const durationMs = Math.round(performance.now() - started);
        const wrapped = !spec.launch && spec.stop === "sandbox";
        resolve({ ...endedBy(code, sig, sink.sent, wrapped), ...seen, outputTail: tail.text(), truncated: tail.truncated, outputBytes: tail.total, durationMs });
      },
    };
    let running: Running | null = null;
    try {
      running = spec.launch ? launched(spec, sink) : spawned(spec, sink);
    } catch (e) {
      // Refused before any process existed (a NUL byte in an argument, a bad cwd ...): this run fails, nothing else.
      return resolve(notStarted((e as Error).message, Math.round(performance.now() - started)));
    }
    timeout = setTimeout(() => {
      seen.timedOut = true;
      running?.terminate();
    }, spec.timeoutMs);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Started by the node's launcher in its slot's sandbox: the launcher relays its output and its end. */
function launched(spec: ProcessSpec, sink: Sink): Running {
  const { launcher, request } = spec.launch!;
  let ended = false;
  let killTimer: NodeJS.Timeout | undefined;
  const id = launcher.launch(request, {
    onPid: (pid) => sink.onPid(pid),
    onOutput: (chunk, stream) => sink.onData(chunk, stream),
    onEnd: (end: LaunchEnd) => {
      ended = true;
      if ("error" in end) sink.onEnd(null, null, end.error);
      else sink.onEnd(end.code, end.signal, null);
    },
  });
  const killAll = () => {
    if (ended) return;
    sink.sent.add("SIGKILL");
    launcher.signal(id, "SIGKILL");
  };
  return {
    killAll,
    terminate: () => {
      if (ended) return;
      sink.sent.add("SIGTERM");
      launcher.signal(id, "SIGTERM");
      killTimer ??= setTimeout(killAll, spec.killGraceMs ?? 5_000);
    },
    clear: () => {
      if (killTimer) clearTimeout(killTimer);
    },
  };
}

/** Spawned by this process: the sandbox's wrapper (a bubblewrap of its own), or an unsandboxed program. */
function spawned(spec: ProcessSpec, sink: Sink): Running {
  const stopMode = spec.stop ?? "group";
  // Its own process group: kill(-pid) reaches grandchildren.
  const child = spawn(spec.file, spec.args, { cwd: spec.cwd, env: spec.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  if (child.pid !== undefined) sink.onPid(child.pid);
  const stop = stopperFor(child, stopMode, spec.killGraceMs ?? 5_000, sink.sent);
  let spawnError: string | null = null;
  child.stdout!.on("data", (chunk: Buffer) => sink.onData(chunk, "stdout"));
  child.stderr!.on("data", (chunk: Buffer) => sink.onData(chunk, "stderr"));
  child.once("error", (e) => {
    spawnError = e.message;
  });
  // The run ends when its main process ends. Anything it left running in its group and still
  // holding the output pipes is killed shortly after, so 'close' cannot hang on a daemonised child.
  // (A sandbox needs none of this: its PID namespace ends with its main process.)
  if (stopMode === "group") {
    child.once("exit", () => {
      setTimeout(stop.cleanUp, 250).unref();
    });
  }
  // 'close' fires after the stdio streams end, so the tail is complete.
  child.once("close", (code, sig) => {
    // The shell may be gone while a background child still runs in the group: make sure it dies.
    if (stopMode === "group") stop.cleanUp();
    sink.onEnd(code, sig, spawnError);
  });
  return stop;
}
