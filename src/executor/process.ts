/**
 * Runs one attempt's process (the sandbox wrapper, or an unsandboxed program in its own process
 * group), collects its output tail, and stops it on timeout or abort: SIGTERM to the program, then
 * SIGKILL to everything it started. Deadlines that must hold while the executor is frozen are the
 * supervisor's (sandbox/supervisor.ts), not this module's.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import type { AbortLike } from "./abort.js";
import { notStarted, type ProcessResult } from "./outcome.js";

export type { ProcessResult };

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
}

/** Keeps the last `cap` bytes written to it. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  total = 0;
  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size - this.chunks[0]!.length >= this.cap) {
      this.size -= this.chunks.shift()!.length;
    }
  }

  get truncated(): boolean {
    return this.total > this.cap;
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    const tail = all.length > this.cap ? all.subarray(all.length - this.cap) : all;
    // A cut may land inside a multi-byte character; drop the partial lead bytes.
    let start = 0;
    while (start < tail.length && start < 4 && (tail[start]! & 0xc0) === 0x80) start++;
    return tail.subarray(start).toString("utf8");
  }
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
function stopperFor(child: ChildProcess, mode: "group" | "sandbox", graceMs: number) {
  let killTimer: NodeJS.Timeout | undefined;
  const killAll = () => {
    if (child.pid === undefined) return;
    try {
      // The group, or the sandbox (its PID namespace ends with it).
      process.kill(mode === "group" ? -child.pid : child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  const terminate = () => {
    if (child.pid !== undefined) {
      const target = mode === "group" ? -child.pid : sandboxedProgram(child.pid);
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
  return { killAll, terminate, clear };
}

export function runProcess(spec: ProcessSpec, signal: AbortLike): Promise<ProcessResult> {
  const started = performance.now();
  const tail = new TailBuffer(spec.tailBytes ?? 16 * 1024);
  const stopMode = spec.stop ?? "group";

  return new Promise((resolve) => {
    // What happened to the run besides its exit, as the result reports it.
    const seen = { timedOut: false, aborted: false, abortReason: null as string | null, spawnError: null as string | null };
    let child: ChildProcess;
    try {
      // Its own process group: kill(-pid) reaches grandchildren.
      child = spawn(spec.file, spec.args, { cwd: spec.cwd, env: spec.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    } catch (e) {
      // Refused before any process existed (a NUL byte in an argument, a bad cwd ...): this run fails, nothing else.
      return resolve(notStarted((e as Error).message, Math.round(performance.now() - started)));
    }
    if (child.pid !== undefined) spec.onSpawn?.(child.pid);
    const stop = stopperFor(child, stopMode, spec.killGraceMs ?? 5_000);

    const timeout = setTimeout(() => {
      seen.timedOut = true;
      stop.terminate();
    }, spec.timeoutMs);

    const onAbort = () => {
      seen.aborted = true;
      seen.abortReason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? "aborted");
      stop.terminate();
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });

    const onData = (stream: "stdout" | "stderr") => (chunk: Buffer) => {
      tail.push(chunk);
      spec.onOutput?.(chunk, stream);
    };
    child.stdout!.on("data", onData("stdout"));
    child.stderr!.on("data", onData("stderr"));

    child.once("error", (e) => {
      seen.spawnError = e.message;
    });
    // The run ends when its main process ends. Anything it left running in its group and still
    // holding the output pipes is killed shortly after, so 'close' cannot hang on a daemonised child.
    // (A sandbox needs none of this: its PID namespace ends with its main process.)
    if (stopMode === "group") {
      child.once("exit", () => {
        setTimeout(stop.killAll, 250).unref();
      });
    }
    // 'close' fires after the stdio streams end, so the tail is complete.
    child.once("close", (code, sig) => {
      clearTimeout(timeout);
      stop.clear();
      signal.removeEventListener("abort", onAbort);
      // The shell may be gone while a background child still runs in the group: make sure it dies.
      if (stopMode === "group") stop.killAll();
      const durationMs = Math.round(performance.now() - started);
      resolve({ exitCode: code, signal: sig, ...seen, outputTail: tail.text(), truncated: tail.truncated, outputBytes: tail.total, durationMs });
    });
  });
}
