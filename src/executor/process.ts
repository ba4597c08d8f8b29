/**
 * Runs one attempt of a user's program as a child process in its own process group, so a timeout
 * or a cancel kills everything it started, not just the shell.
 */
import { spawn } from "node:child_process";
import type { AbortLike } from "./abort.js";

export interface ProcessSpec {
  /** Run by `/bin/sh -c`. Exactly one of command and argv. */
  command: string | null;
  /** Executed directly, no shell. */
  argv: string[] | null;
  env: Record<string, string>;
  cwd: string;
  timeoutMs: number;
  /** After SIGTERM, how long before SIGKILL. @default 5 s */
  killGraceMs?: number;
  /** Bytes of combined stdout/stderr kept (the tail). @default 16 KiB */
  tailBytes?: number;
  /**
   * Kill the whole run (its process group) within `watchdogIntervalMs` if this process dies, even by SIGKILL.
   * Without it, a `kill -9` of the executor would orphan the run, and it could still be running
   * when the reaper hands the run to another executor (two attempts at once).
   * @default the current process id
   */
  dieWithPid?: number | null;
  /**
   * A file holding the attempt's kill deadline as an integer in centiseconds of system uptime
   * (`/proc/uptime`, `os.uptime() * 100`). The watchdog kills the run's process group once that
   * time has passed, even while the executor is frozen (SIGSTOP, a stuck event loop) and cannot
   * kill it itself, so a run never outlives its lease. The executor moves the deadline on every
   * lease renewal. A missing or unreadable file, or a system without `/proc/uptime`, disables the
   * check (the pid check still applies). Needs `dieWithPid`.
   */
  deadlineFile?: string | null;
  /**
   * The kill deadline to use while `deadlineFile` does not exist yet (uptime centiseconds, as in
   * the file). The executor writes the file only when it first renews the lease.
   */
  initialDeadline?: number | null;
  /**
   * How often the watchdog checks the executor's pid, the program's pid and the deadline (rounded
   * to 0.1 s, 0.1–60 s). Each check costs ~1 ms of CPU (one `sleep` process). @default 1000
   */
  watchdogIntervalMs?: number;
  /** Live output, for log streaming. */
  onOutput?: (chunk: Buffer, stream: "stdout" | "stderr") => void;
}

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
 * A watchdog shell in the run's process group kills the group (`kill -KILL 0`) when the executor's
 * pid is gone, or when the lease deadline has passed: the one in `$KAIROS_DEADLINE_FILE` once that
 * file exists, `$KAIROS_DEADLINE` (given at spawn) until then, so a run shorter than one lease
 * renewal costs no file at all. Then it `exec`s
 * the program, so the program keeps the shell's pid (`$$` in the watchdog) and its exit status is
 * the run's. The watchdog also ends when the program itself is gone (its pid reaped) or when the
 * deadline file it has seen is removed (the executor deletes it once the attempt is over), so it
 * can never outlive its run, even where the executor's pid stays alive or is reused (an executor
 * that is pid 1 in a container). It writes nothing and holds no output pipe, and uses only shell
 * builtins besides one `sleep` per check (uptime comes from `/proc/uptime`, "12345.67" → 1234567
 * centiseconds), so a check costs one short-lived process: about 1 ms of CPU.
 */
const WATCHDOG =
  '(seen=; while kill -0 "$KAIROS_EXECUTOR_PID" 2>/dev/null && kill -0 $$ 2>/dev/null; do d=; ' +
  'if [ -n "$KAIROS_DEADLINE_FILE" ]; then ' +
  'if read d < "$KAIROS_DEADLINE_FILE"; then seen=1; elif [ -n "$seen" ]; then exit 0; else d=$KAIROS_DEADLINE; fi; fi; ' +
  'if [ -n "$d" ] && read up _ < /proc/uptime; then up=${up%.*}${up#*.}; [ "$up" -ge "$d" ] 2>/dev/null && break; fi; ' +
  'sleep "$KAIROS_WATCHDOG_SLEEP"; done; kill -KILL 0) </dev/null >/dev/null 2>&1 &';

/** Seconds between watchdog checks, for /bin/sh's `sleep` (0.1 s granularity). */
export function watchdogSleep(intervalMs: number): string {
  return (Math.min(60_000, Math.max(100, Math.round(intervalMs / 100) * 100)) / 1000).toFixed(1);
}

/** Single-quotes a string for /bin/sh. */
const shQuote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

export function commandLine(
  spec: Pick<ProcessSpec, "command" | "argv" | "dieWithPid" | "deadlineFile" | "initialDeadline" | "watchdogIntervalMs">,
): [string, string[]] {
  const watch = spec.dieWithPid === undefined ? process.pid : spec.dieWithPid;
  if (watch === null) {
    return spec.argv && spec.argv.length > 0 ? [spec.argv[0]!, spec.argv.slice(1)] : ["/bin/sh", ["-c", spec.command ?? ""]];
  }
  const initial = spec.initialDeadline != null ? `KAIROS_DEADLINE=${Math.trunc(spec.initialDeadline)}; ` : "";
  const deadline = spec.deadlineFile ? `KAIROS_DEADLINE_FILE=${shQuote(spec.deadlineFile)}; ${initial}` : "";
  const every = `KAIROS_WATCHDOG_SLEEP=${watchdogSleep(spec.watchdogIntervalMs ?? 1_000)}; `;
  const pidGuard = `KAIROS_EXECUTOR_PID=${Math.trunc(watch)}; ${every}${deadline}${WATCHDOG}`;
  if (spec.argv && spec.argv.length > 0) {
    return ["/bin/sh", ["-c", `${pidGuard} exec "$@"`, "kairos-run", ...spec.argv]];
  }
  // The user's command runs in a shell of its own so its syntax cannot interact with the guard.
  return ["/bin/sh", ["-c", `${pidGuard} exec /bin/sh -c "$0"`, spec.command ?? ""]];
}

export function runProcess(spec: ProcessSpec, signal: AbortLike): Promise<ProcessResult> {
  const started = performance.now();
  const tail = new TailBuffer(spec.tailBytes ?? 16 * 1024);
  const killGraceMs = spec.killGraceMs ?? 5_000;
  const [file, args] = commandLine(spec);

  return new Promise((resolve) => {
    let timedOut = false;
    let aborted = false;
    let abortReason: string | null = null;
    let spawnError: string | null = null;
    let killTimer: NodeJS.Timeout | undefined;

    const child = spawn(file, args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true, // own process group: kill(-pid) reaches grandchildren
      stdio: ["ignore", "pipe", "pipe"],
    });

    const killGroup = (sig: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, sig);
      } catch {
        // already gone
      }
    };
    const terminate = () => {
      killGroup("SIGTERM");
      killTimer ??= setTimeout(() => killGroup("SIGKILL"), killGraceMs);
    };

    const timeout = setTimeout(() => {
      timedOut = true;
      terminate();
    }, spec.timeoutMs);

    const onAbort = () => {
      aborted = true;
      abortReason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? "aborted");
      terminate();
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
      spawnError = e.message;
    });
    // The run ends when its main process ends. Anything it left running in its group and still
    // holding the output pipes is killed shortly after, so 'close' cannot hang on a daemonised child.
    child.once("exit", () => {
      setTimeout(() => killGroup("SIGKILL"), 250).unref();
    });
    // 'close' fires after the stdio streams end, so the tail is complete.
    child.once("close", (code, sig) => {
      clearTimeout(timeout);
      if (killTimer) clearTimeout(killTimer);
      signal.removeEventListener("abort", onAbort);
      // The shell may be gone while a background child still runs in the group: make sure it dies.
      killGroup("SIGKILL");
      resolve({
        exitCode: code,
        signal: sig,
        timedOut,
        aborted,
        abortReason,
        spawnError,
        outputTail: tail.text(),
        truncated: tail.truncated,
        outputBytes: tail.total,
        durationMs: Math.round(performance.now() - started),
      });
    });
  });
}
