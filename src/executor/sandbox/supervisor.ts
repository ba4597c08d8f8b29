/**
 * The node's supervisor: one small process per executor (not one per run) that enforces what the
 * executor must enforce even when it cannot act itself.
 *
 * - Lease deadlines: an attempt whose kill deadline passes is SIGKILLed, also while the executor
 *   is frozen (SIGSTOP, a stuck event loop), so a run never outlives its lease and the reaper can
 *   hand it to another executor without two attempts of one slot running at once.
 * - Disk caps: every second it measures each attempt's directory (blocks in use) and kills an
 *   attempt over its cap (the Kubernetes ephemeral-storage model; a single file is also held to
 *   the cap by RLIMIT_FSIZE at once).
 * - Executor death: when its stdin closes (the executor exited, even by SIGKILL) it kills every
 *   attempt it knows of and exits. Sandboxed attempts die with the executor anyway (bubblewrap's
 *   --die-with-parent and the PID namespace); unsandboxed ones (KAIROS_SANDBOX=none) rely on this.
 *
 * Every kill is also logged on its stderr (the executor's log stream, which outlives the executor)
 * as a JSON line in the executor's log format: after a crash, which runs it ended and when.
 *
 * Protocol: lines on its stdin, `S id pid group deadline diskBytes procs dir` (start; `group` 1 kills the
 * process group -pid, 0 the pid: the sandbox's outer process, whose death takes its PID namespace
 * with it; `procs` the run's cgroup.procs or `-`), `U id deadline` (moved), `E id` (ended). Deadlines are CLOCK_MONOTONIC milliseconds
 * (`process.hrtime`), the same clock in both processes. It answers `K id deadline|disk` on stdout
 * for each attempt it killed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

export type SupervisorKill = "deadline" | "disk";

/**
 * The supervisor's program, run as `node -e`. Plain JavaScript in a string rather than a function's
 * source: a transpiler (tsx's esbuild adds `__name(...)` helpers) must not be able to change it.
 */
const SUPERVISOR_SOURCE = String.raw`
"use strict";
const fs = require("node:fs");
const entries = new Map();
const mono = () => Number(process.hrtime.bigint() / 1000000n);
const MAX_ENTRIES = 200000;
// The executor's pid, for the log lines (once it is gone, ppid is no longer it).
const EXECUTOR_PID = process.ppid;
const REASONS = { "executor-gone": "its executor is gone", deadline: "its lease deadline passed", disk: "it went over its disk cap" };
process.stderr.on("error", () => {});
function kill(id, e, why) {
  if (e.killed) return;
  e.killed = true;
  try { process.kill(e.group ? -e.pid : e.pid, "SIGKILL"); } catch {}
  process.stdout.write("K " + id + " " + why + "\n");
  const cut = id.lastIndexOf(":");
  process.stderr.write(JSON.stringify({ level: why === "disk" ? "warn" : "error", time: new Date().toISOString(), pid: EXECUTOR_PID, component: "supervisor", runId: id.slice(0, cut), token: Number(id.slice(cut + 1)), why, msg: "the supervisor killed an attempt: " + REASONS[why] }) + "\n");
}
// Files the run's processes hold open after unlinking them: no directory shows them, the disk
// holds them until closed. Read from /proc/<pid>/fd of every process in the run's cgroup.
function unlinkedBytes(procs) {
  let pids;
  try { pids = fs.readFileSync(procs, "utf8").split("\n").filter(Boolean); } catch { return 0; }
  const seen = new Set();
  let total = 0;
  for (const pid of pids) {
    let fds;
    try { fds = fs.readdirSync("/proc/" + pid + "/fd"); } catch { continue; }
    for (const fd of fds) {
      try {
        const st = fs.statSync("/proc/" + pid + "/fd/" + fd);
        if (!st.isFile() || st.nlink !== 0) continue;
        const key = st.dev + ":" + st.ino;
        if (seen.has(key)) continue;
        seen.add(key);
        total += st.blocks * 512;
      } catch {}
    }
  }
  return total;
}
function usedBytes(dir, cap, procs) {
  let total = procs ? unlinkedBytes(procs) : 0, seen = 0;
  if (total > cap) return total;
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop();
    let names;
    // A path too long to measure (a run nesting directories past PATH_MAX on the host) hides what
    // is under it: counted as over the cap, never as empty.
    try { names = fs.readdirSync(d); } catch (e) { if (e.code === "ENAMETOOLONG") return Infinity; continue; }
    for (const n of names) {
      if (++seen > MAX_ENTRIES) return Infinity;
      try {
        const st = fs.lstatSync(d + "/" + n);
        total += st.blocks * 512;
        if (st.isDirectory()) stack.push(d + "/" + n);
      } catch (e) { if (e.code === "ENAMETOOLONG") return Infinity; }
      if (total > cap) return total;
    }
  }
  return total;
}
let buf = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buf += chunk;
  let nl;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const [op, id, a, b, c, d, ...rest] = buf.slice(0, nl).split(" ");
    buf = buf.slice(nl + 1);
    if (op === "S" && id) entries.set(id, { pid: Number(a), group: b === "1", deadline: Number(c), disk: Number(d), procs: rest[0] === "-" ? null : rest[0], dir: rest.slice(1).join(" "), killed: false });
    else if (op === "U" && id) { const e = entries.get(id); if (e) e.deadline = Number(a); }
    else if (op === "E" && id) { entries.delete(id); process.stdout.write("F " + id + "\n"); }
  }
});
process.stdin.on("end", () => {
  for (const [id, e] of entries) kill(id, e, "executor-gone");
  process.exit(0);
});
setInterval(() => {
  const now = mono();
  for (const [id, e] of entries) if (now >= e.deadline) kill(id, e, "deadline");
}, 100);
setInterval(() => {
  for (const [id, e] of entries) if (!e.killed && e.disk > 0 && usedBytes(e.dir, e.disk, e.procs) > e.disk) kill(id, e, "disk");
}, 1000);
`;

/** CLOCK_MONOTONIC milliseconds, the supervisor's clock. */
export const monotonicMs = (): number => Number(process.hrtime.bigint() / 1000000n);

export class Supervisor {
  private child: ChildProcess | null = null;
  private stopped = false;
  /** Attempts it knows of, to re-announce after a restart. */
  private readonly live = new Map<string, string>();
  /** Callers waiting for the supervisor to confirm it forgot an attempt (see forget). */
  private readonly forgotten = new Map<string, () => void>();

  constructor(
    private readonly onKill: (id: string, why: SupervisorKill) => void,
    private readonly onError: (message: string) => void,
  ) {}

  start(): void {
    const child = spawn(process.execPath, ["-e", SUPERVISOR_SOURCE], {
      stdio: ["pipe", "pipe", "inherit"],
      env: {},
    });
    this.child = child;
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const [k, id, why] = line.split(" ");
      if (k === "K" && id && (why === "deadline" || why === "disk")) this.onKill(id, why);
      if (k === "F" && id) this.forgotten.get(id)?.();
    });
    child.stdin!.on("error", () => undefined);
    child.once("exit", (code, signal) => {
      if (this.stopped) return;
      this.onError(`the run supervisor exited (${signal ?? `code ${code}`}); restarting it`);
      this.start();
      for (const line of this.live.values()) this.send(line);
    });
  }

  private send(line: string): void {
    this.child?.stdin?.write(`${line}\n`);
  }

  /**
   * `killGroup`: kill the process group `-pid` (unsandboxed runs) rather than the process.
   * `procsFile`: the run's cgroup.procs, whose processes' unlinked open files count toward the cap.
   */
  watch(id: string, pid: number, killGroup: boolean, deadline: number, diskBytes: number, dir: string, procsFile: string | null = null): void {
    if (procsFile?.includes(" ")) procsFile = null;
    const line = `S ${id} ${pid} ${killGroup ? 1 : 0} ${Math.floor(deadline)} ${Math.floor(diskBytes)} ${procsFile ?? "-"} ${dir}`;
    this.live.set(id, line);
    this.send(line);
  }

  extend(id: string, deadline: number): void {
    const line = this.live.get(id);
    if (!line) return;
    const parts = line.split(" ");
    parts[4] = String(Math.floor(deadline));
    this.live.set(id, parts.join(" "));
    this.send(`U ${id} ${Math.floor(deadline)}`);
  }

  /**
   * Stops watching the attempt. The promise settles once the supervisor confirmed it (or after
   * `waitMs`): it answers in order, so a kill it made before (a `K` line, reported through onKill)
   * has been handled by then. An attempt whose process was killed waits for it, to know whether the
   * supervisor did it (its disk cap) before the end is reported.
   */
  forget(id: string, waitMs = 1_000): Promise<void> {
    if (!this.live.delete(id)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.forgotten.get(id) === done) this.forgotten.delete(id);
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      this.forgotten.set(id, done);
      this.send(`E ${id}`);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    child.stdin!.end();
    await exited;
  }
}
