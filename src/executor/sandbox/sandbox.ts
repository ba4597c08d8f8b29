/**
 * How this node runs a user's program: in a bubblewrap sandbox as the slot's own unprivileged
 * user (the default), or as a plain process (KAIROS_SANDBOX=none, or `dev` on a machine without
 * bubblewrap). Either way the run gets its cgroup limits where the node can make cgroups, its
 * rlimits, a fixed PATH and only its declared environment, and a private working directory and
 * /tmp under a disk cap that the supervisor enforces.
 *
 * Slots: slot i has its own uid (uidBase + i, when the executor runs as root) and its own
 * directories, `<workRoot>/<node>-<i>/{work,tmp}`, emptied after every run. A run therefore never
 * shares a uid, a directory or a process namespace with a run going at the same time.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, copyFileSync, existsSync, lstatSync, mkdirSync, writeFileSync, type Stats } from "node:fs";
import { chmod, chown, mkdir, rm, rmdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../domain/index.js";
import type { Logger } from "../../support/index.js";
import type { JobSpec, NodeIsolation, ResourceRequest } from "../../domain/index.js";
import type { ProcessSpec } from "../process.js";
import { bwrapArgs, GROUP, PASSWD, SANDBOX_GIVEN, SANDBOX_HOME, SANDBOX_PATH, SANDBOX_TMP, slotSandboxArgs, wrapperArgs } from "./bwrap.js";
import { RunAbort } from "../abort.js";
import { runProcess } from "../process.js";
import { Launcher, launcherBinary } from "./launcher.js";
import { giveFiles } from "./given-files.js";
import { killOrphans, reachableWorkRoot, removeTree, removeTreeSync, supportsDisableUserns } from "./host.js";
import { describeIsolation, KEPT_SANDBOX, type SandboxMode } from "./isolation.js";
import { openCgroups, type AttemptCgroup, type Cgroups } from "./cgroups.js";
import { EgressNetworks } from "./egress.js";

export type { SandboxMode };

export interface SandboxOptions {
  /** `auto`: bubblewrap when this machine can run it, else plain processes with a loud warning (dev only). */
  mode: SandboxMode | "auto";
  /**
   * Start bubblewrap runs through the launcher, in a sandbox kept per slot (launcher.ts), where
   * its binary is built; otherwise (or false) each run starts a bubblewrap of its own. @default true
   */
  launcher?: boolean;
  workRoot: string;
  slots: number;
  /** Slot i runs as uid/gid uidBase + i (when the executor is root). */
  uidBase: number;
  /** Extra host paths bound read-only into every sandbox. */
  roPaths: readonly string[];
  /** Host paths bound writable into every sandbox (shared by every job on the node). */
  rwPaths?: readonly string[];
  /** Open files per run (RLIMIT_NOFILE). @default 4096 */
  nofile?: number;
  /** Distinguishes this executor's directories and cgroups from another's on the same host. */
  nodeTag: string;
  /** Offer EGRESS network access from this subnet (an IPv4 /16), denying these ranges; null: not offered. */
  egress?: { subnet: string; deny: readonly string[] } | null;
  log: Logger;
}

/** One attempt, ready to spawn. */
export interface PreparedAttempt {
  process: Pick<ProcessSpec, "file" | "args" | "env" | "cwd" | "stop" | "launch">;
  /**
   * The slot's directory of files Kairos gives the run (a DAG task's inputs and params): where the
   * executor writes them, and where the program finds them. Read-only to a sandboxed run; its
   * files are rewritten in place for each run (prepare), so writing them costs no file creation.
   */
  given: { host: string; inside: string };
  /** The directory the disk cap applies to (work and tmp), and the cap in bytes. */
  diskDir: string;
  diskBytes: number;
  cgroup: AttemptCgroup | null;
}

const BWRAP_PATHS = ["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"];
const SETPRIV_PATHS = ["/usr/bin/setpriv", "/bin/setpriv"];
const isRoot = () => process.getuid?.() === 0;

export class Sandbox {
  /** Starts runs in the slots' long-lived sandboxes (null: each run spawns its own bubblewrap). */
  private launcher: Launcher | null = null;
  /** The launcher's binary, also the zygote each slot's sandbox runs. */
  private launcherPath = "";

  private constructor(
    private readonly o: SandboxOptions,
    readonly mode: SandboxMode,
    private readonly bwrap: string | null,
    private readonly cgroups: Cgroups | null,
    readonly isolation: NodeIsolation,
    private readonly etcDir: string,
    private readonly disableUserns: boolean,
    private readonly egress: EgressNetworks | null = null,
  ) {}

  /**
   * Sets the node up (slot directories, cgroups) and proves it works by running one program in a
   * sandbox. Throws ConfigError when bubblewrap is asked for (or is the default, outside dev) and
   * cannot run here, naming what is missing.
   */
  static open(opts: SandboxOptions): Sandbox {
    const o = { ...opts, workRoot: reachableWorkRoot(opts) };
    mkdirSync(o.workRoot, { recursive: true });
    // Others may pass through (the slot users must reach their own directories) but not list.
    chmodSync(o.workRoot, 0o711);
    const etcDir = join(o.workRoot, `${o.nodeTag}-etc`);
    mkdirSync(etcDir, { recursive: true, mode: 0o755 });
    writeFileSync(join(etcDir, "passwd"), PASSWD, { mode: 0o644 });
    writeFileSync(join(etcDir, "group"), GROUP, { mode: 0o644 });

    const notes: string[] = [];
    // The pid in the name lets a later executor remove what one that died without closing left.
    // What an executor that died left running under the slots' uids goes first (issue #27).
    if (isRoot()) {
      const orphans = killOrphans(o.uidBase, o.slots);
      if (orphans > 0) o.log.warn({ processes: orphans }, "killed processes of the slots' users left by an executor that died");
    }
    const cg = openCgroups(`kairos-${o.nodeTag.replace(/[^0-9a-z]/gi, "").toLowerCase()}-${process.pid}`);
    if (!cg.cgroups) notes.push(`no cgroup limits: ${cg.reason}; memory falls back to RLIMIT_AS and processes to RLIMIT_NPROC`);
    const bwrap = BWRAP_PATHS.find((p) => existsSync(p)) ?? null;
    const setpriv = SETPRIV_PATHS.find((p) => existsSync(p)) ?? null;

    let mode: SandboxMode = o.mode === "auto" ? "bubblewrap" : o.mode;
    let failure: string | null = null;
    if (mode === "bubblewrap") {
      if (!bwrap) failure = "bubblewrap is not installed (apt-get install bubblewrap)";
      else if (isRoot() && !setpriv) failure = "setpriv (util-linux) is not installed; it drops a run to its unprivileged user";
    }
    const disableUserns = mode === "bubblewrap" && bwrap !== null && supportsDisableUserns(bwrap);
    const probe = new Sandbox(o, mode, bwrap, cg.cgroups, { mode: "NONE", enforced: [], network: ["NONE"], notes }, etcDir, disableUserns);
    for (let i = 0; i < o.slots; i++) probe.resetSlotSync(i);
    if (mode === "bubblewrap" && !failure) failure = probe.selfTest();
    if (failure) {
      if (o.mode !== "auto") throw new ConfigError(`KAIROS_SANDBOX=bubblewrap: the sandbox cannot be set up on this machine: ${failure}. Fix that, or set KAIROS_SANDBOX=none to run jobs unisolated (never with untrusted users).`);
      o.log.warn(
        { reason: failure },
        "!!! NO SANDBOX: jobs run as plain processes with this server's user, network and filesystem. Fine for a developer laptop; never for untrusted users. Install bubblewrap to isolate them. !!!",
      );
      notes.push(`no sandbox: ${failure}`);
      mode = "none";
    }
    if (mode === "bubblewrap" && !disableUserns) notes.push("bubblewrap is older than 0.8 (no --disable-userns): runs can make nested user namespaces");
    let egress: EgressNetworks | null = null;
    if (mode === "bubblewrap" && o.egress) {
      const opened = EgressNetworks.open({ subnet: o.egress.subnet, deny: o.egress.deny, slots: o.slots });
      if (opened.egress) egress = opened.egress;
      else notes.push(opened.reason);
    } else if (mode === "bubblewrap") {
      notes.push("EGRESS network access is not offered by this node (set KAIROS_EGRESS_SUBNET to offer it)");
    }
    const isolation = describeIsolation(mode, cg.cgroups, notes, disableUserns, egress !== null);
    const sandbox = new Sandbox(o, mode, bwrap, cg.cgroups, isolation, etcDir, disableUserns, egress);
    if (mode === "bubblewrap") sandbox.openLauncher();
    return sandbox;
  }

  /** Starts the launcher and every slot's sandbox in it, where its binary is built; notes why not otherwise. */
  private openLauncher(): void {
    if (this.o.launcher === false) {
      this.isolation.notes.push("runs start one bubblewrap each (KAIROS_SANDBOX_LAUNCHER=off)");
      return;
    }
    const binary = launcherBinary();
    if (!binary) {
      this.isolation.notes.push("the run launcher is not built (no C compiler when `npm run build` ran: apt-get install gcc): runs start one bubblewrap each, slower");
      return;
    }
    // The slots' sandboxes open the zygote as their unprivileged uids: a copy beside the sandbox's
    // /etc (removed with it on close), which they can reach, not the build's, whose checkout may sit in a directory only its
    // owner can enter (a clone in a `mktemp -d` directory made every slot's sandbox fail to start).
    const zygote = join(this.etcDir, "zygote");
    copyFileSync(binary, zygote);
    chmodSync(zygote, 0o755);
    this.launcherPath = zygote;
    this.launcher = Launcher.start(binary, this.o.log);
    for (let i = 0; i < this.o.slots; i++) this.defineSlot(i);
    this.isolation.enforced.push(...KEPT_SANDBOX);
  }

  private defineSlot(slot: number): void {
    const d = this.slotDirs(slot);
    const args = slotSandboxArgs({
      slotRoot: d.root,
      launcher: this.launcherPath,
      passwdFile: join(this.etcDir, "passwd"),
      groupFile: join(this.etcDir, "group"),
      roPaths: this.o.roPaths,
      rwPaths: this.o.rwPaths ?? [],
      disableUserns: this.disableUserns,
    });
    this.launcher!.defineSlot(slot, this.slotUid(slot) ?? process.getuid?.() ?? 0, [this.bwrap!, ...args]);
  }

  /**
   * Proves the launcher works here by running `true` in slot 0's sandbox; if it does not, runs
   * start one bubblewrap each (as without it) and the node's isolation notes say why.
   */
  async ready(): Promise<void> {
    const launcher = this.launcher;
    if (!launcher) return;
    const prepared = this.prepare(0, `launcher-selftest-${process.pid}`, { kind: "COMMAND", command: null, argv: ["true"], env: {}, timeoutMs: 10_000, pool: "" }, {}, { cpu: 1, memoryMb: 64, pids: 16, diskMb: 1 });
    const r = await runProcess({ ...prepared.process, timeoutMs: 10_000, killGraceMs: 0 }, new RunAbort());
    prepared.cgroup?.killAll();
    prepared.cgroup?.remove();
    await this.releaseSlot(0);
    if (r.exitCode === 0) return;
    const why = r.spawnError ?? (r.timedOut ? "a test run did not end within 10 s" : `exit ${r.exitCode ?? r.signal}: ${r.outputTail.trim().slice(0, 300)}`);
    this.o.log.error({ reason: why }, "the run launcher does not work on this node; runs start one bubblewrap each (slower)");
    this.isolation.notes.push(`the run launcher does not work here (${why}): runs start one bubblewrap each, slower`);
    this.launcher = null;
    this.isolation.enforced.splice(this.isolation.enforced.indexOf(KEPT_SANDBOX[0]!), KEPT_SANDBOX.length);
    await launcher.close();
  }

  /** Runs `true` in a sandbox of slot 0; the reason it failed, or null. */
  private selfTest(): string | null {
    const prepared = this.prepare(0, `selftest-${process.pid}`, { kind: "COMMAND", command: null, argv: ["true"], env: {}, timeoutMs: 10_000, pool: "" }, {}, {
      cpu: 1,
      memoryMb: 64,
      pids: 16,
      diskMb: 1,
    });
    try {
      const r = spawnSync(prepared.process.file, prepared.process.args, { cwd: prepared.process.cwd, env: prepared.process.env, timeout: 10_000, encoding: "utf8" });
      if (r.error) return r.error.message;
      if (r.status !== 0) return `a test sandbox exited with ${r.status ?? r.signal}: ${(r.stderr || r.stdout).trim().slice(0, 500)}`;
      return null;
    } finally {
      prepared.cgroup?.remove();
    }
  }

  private slotDirs(slot: number): { root: string; work: string; tmp: string; given: string } {
    const root = join(this.o.workRoot, `${this.o.nodeTag}-${slot}`);
    return { root, work: join(root, "work"), tmp: join(root, "tmp"), given: join(root, "given") };
  }

  /** The slot's uid, when runs get one of their own (bubblewrap as root). */
  private slotUid(slot: number): number | null {
    return this.mode === "bubblewrap" && isRoot() ? this.o.uidBase + slot : null;
  }

  /**
   * Makes the slot's directories afresh: empty, owned by the slot's user, 0700. The slot's own
   * directory stays (the executor's, 0711: a run cannot change it), so the slot's long-lived
   * sandbox, which has it bound, sees the new ones; it is made again only when it is not the
   * executor's directory any more (an unsandboxed run, as the executor's user, could replace it).
   */
  private resetSlotSync(slot: number): void {
    const d = this.slotDirs(slot);
    let root: Stats | null = null;
    try {
      root = lstatSync(d.root);
    } catch {
      // not made yet
    }
    if (!root || !root.isDirectory() || root.uid !== process.getuid?.()) {
      removeTreeSync(d.root);
      mkdirSync(d.root, { mode: 0o711 });
      if (root && this.launcher) this.defineSlot(slot);
    } else {
      for (const dir of [d.work, d.tmp, d.given]) removeTreeSync(dir);
    }
    chmodSync(d.root, 0o711);
    for (const dir of [d.work, d.tmp]) this.makeRunDir(dir, slot);
    // The executor's, readable by the run, not writable by it (read-only inside bubblewrap too).
    mkdirSync(d.given, { mode: 0o755 });
    chmodSync(d.given, 0o755);
  }

  /**
   * After a run: the slot's working directories as they were before it, made again (at once when
   * empty, the common case; removed whole first otherwise). The given directory is the next run's
   * to rewrite (prepare), before anything of that run exists.
   */
  async releaseSlot(slot: number): Promise<void> {
    const d = this.slotDirs(slot);
    // Made afresh even when empty: a run can leave what no listing shows on the directory itself
    // (extended attributes, a default ACL its successor's files would inherit). A few syscalls,
    // off the event loop (libuv's thread pool): the run's result is being written meanwhile.
    const uid = this.slotUid(slot);
    const fast = await Promise.allSettled(
      [d.work, d.tmp].map(async (dir) => {
        await rmdir(dir);
        await mkdir(dir, { mode: 0o700 });
        await chmod(dir, 0o700);
        if (uid !== null) await chown(dir, uid, uid);
      }),
    );
    if (fast.every((r) => r.status === "fulfilled")) return;
    // One not empty, not a directory, or gone: both removed whole and made again. Only once both
    // quick tries have ended: one still making its directory would race the slow path's
    // (EEXIST, and the slot left without its given directory).
    await Promise.all([removeTree(d.work), removeTree(d.tmp)]);
    this.resetSlotSync(slot);
  }

  /** A run's writable directory: empty, the slot user's, 0700. */
  private makeRunDir(dir: string, slot: number): void {
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o700);
    const uid = this.slotUid(slot);
    if (uid !== null) chownSync(dir, uid, uid);
  }

  /**
   * What to spawn for one attempt in `slot`. `kairosEnv` are the documented KAIROS_* variables;
   * the rest of the environment is the job's own plus a fixed PATH, HOME, TMPDIR and LANG.
   * `given` are the files the run is given (a DAG task's inputs and params, by name): written into
   * the slot's given directory first, every other file there blanked, so that nothing of the
   * slot's previous run (another user's, maybe) is left for this one, whatever kind it is.
   */
  prepare(slot: number, name: string, spec: JobSpec, kairosEnv: Record<string, string>, res: ResourceRequest, given: Readonly<Record<string, string>> = {}): PreparedAttempt {
    const d = this.slotDirs(slot);
    if (!giveFiles(d.given, given)) {
      // Not as the executor left it (a link, a file of another's): the slot made again, then written afresh.
      this.resetSlotSync(slot);
      if (!giveFiles(d.given, given)) throw new Error("the slot's given files could not be written");
    }
    const sandboxed = this.mode === "bubblewrap";
    const env: Record<string, string> = {
      PATH: SANDBOX_PATH,
      HOME: sandboxed ? SANDBOX_HOME : d.work,
      TMPDIR: sandboxed ? SANDBOX_TMP : d.tmp,
      LANG: "C.UTF-8",
      ...spec.env,
      ...kairosEnv,
    };
    const program = spec.argv && spec.argv.length > 0 ? spec.argv : ["/bin/sh", "-c", spec.command ?? ""];
    const egress = sandboxed && spec.network === "EGRESS";
    // Submission refuses EGRESS where no node offers it; a run queued before this node stopped offering it fails here.
    if (egress && !this.egress) throw new Error("this node does not offer EGRESS network access");
    const cgroup = this.cgroups ? this.cgroups.create(name, { cpu: res.cpu, memoryMb: res.memoryMb, pids: res.pids }) : null;
    // bubblewrap ends a missing program with exit 1 and its own message: started by a shell instead, it
    // ends 127 naming the program, as a command and the launcher do.
    const inBwrap = spec.argv && spec.argv.length > 0 ? ["/bin/sh", "-c", 'exec "$@"', "kairos", ...program] : program;
    const argv = sandboxed
      ? [this.bwrap!, ...bwrapArgs({ workDir: d.work, tmpDir: d.tmp, givenDir: d.given, passwdFile: join(this.etcDir, "passwd"), groupFile: join(this.etcDir, "group"), roPaths: this.o.roPaths, rwPaths: this.o.rwPaths ?? [], env, argv: inBwrap, egress, disableUserns: this.disableUserns })]
      : cgroupFallbackArgv(program, cgroup, res);
    const uid = this.slotUid(slot);
    const launch =
      this.launcher && sandboxed && !egress
        ? {
            launcher: this.launcher,
            request: {
              slot,
              argv: program,
              env,
              procsFiles: cgroup?.procsFiles ?? [],
              nofile: this.o.nofile ?? 4096,
              fileSizeBytes: res.diskMb * 1048576,
              // Per uid: the slot's sandbox itself (bubblewrap, its init, the zygote, the run's init) counts too.
              nproc: cgroup || uid === null ? null : res.pids + 4,
              addressSpaceBytes: cgroup ? null : res.memoryMb * 1048576,
              shmMb: res.memoryMb,
              binds: [...this.o.roPaths, ...(this.o.rwPaths ?? [])],
            },
          }
        : undefined;
    const [file, args] = wrapperArgs({
      procsFiles: cgroup?.procsFiles ?? [],
      nofile: this.o.nofile ?? 4096,
      fileSizeBytes: res.diskMb * 1048576,
      // Without a pids cgroup, RLIMIT_NPROC: per uid, so only where each slot has its own.
      nproc: cgroup || uid === null ? null : res.pids,
      uid,
      netns: egress ? this.egress!.nsPath(slot) : null,
      argv,
    });
    return {
      // bubblewrap gets no environment of ours (its /proc/1/environ is visible inside); a plain program gets its own.
      process: { file, args, env: sandboxed ? {} : env, cwd: d.work, stop: sandboxed ? "sandbox" : "group", ...(launch ? { launch } : {}) },
      given: { host: d.given, inside: sandboxed ? SANDBOX_GIVEN : d.given },
      diskDir: d.root,
      diskBytes: res.diskMb * 1048576,
      cgroup,
    };
  }

  /** Removes the slots' directories and this node's cgroups. */
  async close(): Promise<void> {
    await this.launcher?.close();
    this.launcher = null;
    for (let i = 0; i < this.o.slots; i++) await removeTree(this.slotDirs(i).root).catch(() => undefined);
    await rm(this.etcDir, { recursive: true, force: true }).catch(() => undefined);
    if (this.o.workRoot.startsWith(tmpdir())) await removeTree(this.o.workRoot).catch(() => undefined);
    await this.cgroups?.close();
    this.egress?.teardown();
  }
}

/** Without cgroups, memory is bounded by RLIMIT_AS (address space: coarse, but a bound). */
function cgroupFallbackArgv(program: readonly string[], cgroup: AttemptCgroup | null, res: ResourceRequest): string[] {
  if (cgroup) return [...program];
  return ["/bin/sh", "-c", 'ulimit -v "$0" || exit 125; exec "$@"', String(res.memoryMb * 1024), ...program];
}
