/**
 * The executor's side of its launcher (launcher.c): one small long-lived process per executor that
 * keeps a bubblewrap sandbox alive per slot and starts each run inside it, so the executor's event
 * loop never forks, and a run's start costs a clone inside a sandbox already made rather than a new
 * bubblewrap (docs/decisions.md, "Runs start in a sandbox kept per slot").
 *
 * Frames: see launcher.c. Requests are NUL-separated fields after a u32 length; events are
 * u32 length, u8 type, u32 run id, data.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Logger } from "../../support/index.js";

/** How a launched run ended: its exit code, the signal that killed it, or why it never started. */
export type LaunchEnd = { code: number; signal: null } | { code: null; signal: NodeJS.Signals | string } | { error: string };

export interface LaunchRequest {
  slot: number;
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  /** The run's cgroup.procs files (the launcher writes the run's pid to each before it starts). */
  procsFiles: readonly string[];
  nofile: number;
  fileSizeBytes: number;
  /** RLIMIT_NPROC, RLIMIT_AS (bytes): null where a cgroup limits processes and memory instead. */
  nproc: number | null;
  addressSpaceBytes: number | null;
  /** Size of the run's own /dev/shm (its pages count towards its memory cgroup). */
  shmMb: number;
  /** The node's configured binds (read-only and writable paths): bound again after /work and /tmp, which may hide them. */
  binds: readonly string[];
}

export interface LaunchHandlers {
  /** The run's init has joined its cgroup: its host pid (killing it ends the whole run). */
  onPid(pid: number): void;
  onOutput(chunk: Buffer, stream: "stdout" | "stderr"): void;
  onEnd(end: LaunchEnd): void;
}

/**
 * The launcher binary that `npm run build` makes (scripts/build-native.mjs) in the package's
 * `dist/native/`, found from this module up (it runs from src/ under tsx, from dist/, or from a
 * build elsewhere in the package such as the bench's), or null when there is none.
 */
export function launcherBinary(): string | null {
  const candidates = process.env.KAIROS_LAUNCHER_BIN ? [process.env.KAIROS_LAUNCHER_BIN] : packageDirs().map((d) => join(d, "dist", "native", "kairos-launcher"));
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return null;
}

/** The directories above this module that hold a package.json, nearest first. */
function packageDirs(): string[] {
  const out: string[] = [];
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) out.push(dir);
    if (dirname(dir) === dir) return out;
  }
}

const SIGNALS: Record<number, NodeJS.Signals> = { 1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM", 24: "SIGXCPU", 25: "SIGXFSZ", 31: "SIGSYS" };

function frame(fields: readonly (string | number)[]): Buffer {
  const body = Buffer.from(fields.map((f) => `${f}\0`).join(""), "utf8");
  const head = Buffer.alloc(4);
  head.writeUInt32LE(body.length, 0);
  return Buffer.concat([head, body]);
}

export class Launcher {
  private child!: ChildProcess;
  private readonly runs = new Map<number, LaunchHandlers>();
  /** The slots' definitions, sent again to a launcher started after one died. */
  private readonly slots = new Map<number, Buffer>();
  private nextId = 1;
  private pending: Buffer = Buffer.alloc(0);
  private exited = false;
  private closing = false;
  /** When the launcher was (re)started lately: one dying over and over is not restarted for ever. */
  private readonly starts: number[] = [];
  private closed!: Promise<void>;

  private constructor(
    private readonly binary: string,
    private readonly log: Logger,
  ) {
    this.spawnChild();
  }

  static start(binary: string, log: Logger): Launcher {
    return new Launcher(binary, log);
  }

  private spawnChild(): void {
    this.starts.push(Date.now());
    this.exited = false;
    this.pending = Buffer.alloc(0);
    const child = spawn(this.binary, ["serve"], { stdio: ["pipe", "pipe", "inherit"], env: {} });
    this.child = child;
    child.stdin!.on("error", () => undefined);
    child.stdout!.on("data", (chunk: Buffer) => this.onData(chunk));
    this.closed = new Promise((resolve) =>
      child.once("exit", (code, signal) => {
        this.exited = true;
        // Its runs died with it (their sandboxes die with the launcher).
        for (const [id, h] of this.runs) {
          this.runs.delete(id);
          h.onEnd({ code: null, signal: "SIGKILL" });
        }
        if (!this.closing) this.restart(code, signal);
        resolve();
      }),
    );
  }

  /** A launcher that died is started again with every slot (a few times a minute at most). */
  private restart(code: number | null, signal: NodeJS.Signals | null): void {
    const now = Date.now();
    while (this.starts.length && this.starts[0]! < now - 60_000) this.starts.shift();
    if (this.starts.length >= 5) {
      this.log.error({ code, signal }, "the run launcher keeps dying; not started again: sandboxed runs on this node fail until the executor restarts");
      return;
    }
    this.log.error({ code, signal }, "the run launcher exited; starting it again");
    this.spawnChild();
    for (const frameOfSlot of this.slots.values()) this.send(frameOfSlot);
  }

  get alive(): boolean {
    return !this.exited;
  }

  /** (Re)defines slot `slot`'s sandbox: bubblewrap and its arguments, started as `uid`. */
  defineSlot(slot: number, uid: number, bwrapArgv: readonly string[]): void {
    const f = frame(["S", slot, uid, ...bwrapArgv]);
    this.slots.set(slot, f);
    this.send(f);
  }

  /** Starts a run in its slot's sandbox; returns its id (for signal). */
  launch(req: LaunchRequest, handlers: LaunchHandlers): number {
    // The launcher's ids are u32 (launcher.c): wrapped here, and never one still in use.
    let id = this.nextId;
    while (this.runs.has(id)) id = id >= 0xffff_ffff ? 1 : id + 1;
    this.nextId = id >= 0xffff_ffff ? 1 : id + 1;
    if (this.exited) {
      queueMicrotask(() => handlers.onEnd({ error: "the run launcher is not running" }));
      return id;
    }
    const env = Object.entries(req.env).map(([k, v]) => `${k}=${v}`);
    this.runs.set(id, handlers);
    this.send(
      frame([
        "R", id, req.slot, req.procsFiles.length, ...req.procsFiles,
        req.nofile, req.fileSizeBytes, req.nproc ?? 0, req.addressSpaceBytes ?? 0, req.shmMb,
        req.binds.length, ...req.binds, req.argv.length, ...req.argv, env.length, ...env,
      ]),
    );
    return id;
  }

  /** SIGTERM and the like go to the program (its init forwards them); SIGKILL ends the whole run. */
  signal(id: number, signal: "SIGTERM" | "SIGKILL"): void {
    if (this.runs.has(id)) this.send(frame(["K", id, signal === "SIGKILL" ? 9 : 15]));
  }

  /** Ends the launcher: every slot's sandbox, and any run still in one, dies with it. */
  async close(): Promise<void> {
    this.closing = true;
    if (!this.exited) this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5_000);
    await this.closed;
    clearTimeout(timer);
  }

  private send(buf: Buffer): void {
    if (!this.exited) this.child.stdin!.write(buf);
  }

  private onData(chunk: Buffer): void {
    let buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    let off = 0;
    while (buf.length - off >= 4) {
      const len = buf.readUInt32LE(off);
      if (buf.length - off - 4 < len) break;
      const type = String.fromCharCode(buf[off + 4]!);
      const id = buf.readUInt32LE(off + 5);
      const data = buf.subarray(off + 9, off + 4 + len);
      off += 4 + len;
      this.onEvent(type, id, data);
    }
    this.pending = off === buf.length ? Buffer.alloc(0) : Buffer.from(buf.subarray(off));
    buf = this.pending;
  }

  private onEvent(type: string, id: number, data: Buffer): void {
    if (type === "L") {
      this.log.warn({ slot: id, message: data.toString("utf8") }, "run launcher");
      return;
    }
    const h = this.runs.get(id);
    if (!h) return;
    if (type === "O") h.onOutput(Buffer.from(data), "stdout");
    else if (type === "E") h.onOutput(Buffer.from(data), "stderr");
    else if (type === "P") h.onPid(Number(data.toString("utf8")));
    else if (type === "D") {
      this.runs.delete(id);
      const text = data.toString("utf8");
      const rest = text.slice(1);
      if (text[0] === "x") h.onEnd({ code: Number(rest), signal: null });
      else if (text[0] === "s") h.onEnd({ code: null, signal: SIGNALS[Number(rest)] ?? `SIG${rest}` });
      else h.onEnd({ error: rest });
    }
  }
}
