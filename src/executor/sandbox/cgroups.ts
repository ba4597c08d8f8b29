/**
 * A control group per attempt, for memory, CPU and process-count limits and for accounting (peak
 * memory, CPU seconds, whether the kernel's OOM killer ended it). cgroup v1 (one hierarchy per
 * controller, as on these machines) and v2 (one unified hierarchy) behind one interface.
 *
 * Groups are made under the executor's own group of each hierarchy (read from /proc/self/cgroup),
 * so a run stays inside whatever limits the executor itself was given (a container's, a systemd
 * slice's). The attempt's wrapper shell writes its own pid into `procsFiles` before it becomes the
 * sandbox, so every process of the run starts inside the group.
 */
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface CgroupLimits {
  /** CPU cores (fractions allowed): a CFS quota of cpu × period. */
  cpu: number;
  memoryMb: number;
  pids: number;
}

export interface CgroupUsage {
  peakMemoryMb: number | null;
  cpuSeconds: number | null;
  oomKilled: boolean;
}

export interface AttemptCgroup {
  /** The files the wrapper writes its pid to (one per v1 hierarchy, one for v2). */
  readonly procsFiles: string[];
  usage(): CgroupUsage;
  /** SIGKILLs every process left in the group (v2 `cgroup.kill`, else one by one). */
  killAll(): void;
  remove(): void;
  /**
   * {@link killAll} then {@link remove}, off the event loop (in libuv's thread pool): after a run,
   * while its result is being written. Done synchronously, a removal (several milliseconds for a v1
   * memory group a run used) held the result's answer, and so a DAG task's children (issue #27).
   */
  release(): Promise<void>;
}

export interface Cgroups {
  readonly version: 1 | 2;
  /** The limits this node enforces through cgroups. */
  readonly enforces: readonly ("memory" | "cpu" | "pids")[];
  create(name: string, limits: CgroupLimits): AttemptCgroup;
  /** Removes this node's groups: attempts' groups not removable yet are retried for up to 2 s, then the parents. */
  close(): Promise<void>;
}

const ROOT = "/sys/fs/cgroup";
const CFS_PERIOD_US = 100_000;

/** The executor's own group per controller (v1 `N:ctrl,ctrl:/path`, v2 `0::/path`). */
function ownGroups(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    for (const ctrl of m[1]!.split(",")) out.set(ctrl, m[2]!);
  }
  return out;
}

const write = (file: string, value: string) => writeFileSync(file, value);
const readNum = (file: string): number | null => {
  try {
    const n = Number(readFileSync(file, "utf8").trim());
    return Number.isFinite(n) ? n : null;
  } catch {
    return null;
  }
};
const readKey = (file: string, key: string): number | null => {
  try {
    const m = new RegExp(`^${key} (\\d+)$`, "m").exec(readFileSync(file, "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
};

/** SIGKILLs every pid listed in a cgroup.procs file's text (those already gone are skipped). */
function sigkillListed(procs: string): void {
  for (const pid of procs.split("\n").filter(Boolean)) {
    try {
      process.kill(Number(pid), "SIGKILL");
    } catch {
      // gone
    }
  }
}

function killPids(procsFile: string): void {
  let procs: string;
  try {
    procs = readFileSync(procsFile, "utf8");
  } catch {
    return;
  }
  sigkillListed(procs);
}

/** killPids off the event loop (the read through libuv's pool). */
async function killPidsAsync(procsFile: string): Promise<void> {
  let procs: string;
  try {
    procs = await readFile(procsFile, "utf8");
  } catch {
    return;
  }
  sigkillListed(procs);
}

/**
 * Groups whose removal failed: the kernel refuses to remove a group while a process of it is still
 * exiting (EBUSY), which happens right after a run's sandbox ends. Retried at every create and at
 * close, so none is left behind.
 */
const leftovers = new Set<string>();

function rmdirQuiet(dir: string): boolean {
  try {
    rmdirSync(dir);
    leftovers.delete(dir);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") {
      leftovers.delete(dir);
      return true;
    }
    leftovers.add(dir);
    return false;
  }
}

/** Retries the removal of groups that were busy when their run ended. */
function retryLeftovers(): void {
  for (const dir of [...leftovers]) rmdirQuiet(dir);
}

async function rmdirQuietAsync(dir: string): Promise<void> {
  try {
    await rmdir(dir);
    leftovers.delete(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") leftovers.delete(dir);
    else leftovers.add(dir);
  }
}

/** Retries the leftovers under `bases` for up to `ms`, then removes the bases. */
async function closeBases(bases: readonly string[], ms = 2_000): Promise<void> {
  const under = () => [...leftovers].filter((d) => bases.some((b) => d.startsWith(`${b}/`)));
  for (const end = Date.now() + ms; under().length > 0 && Date.now() < end; ) {
    retryLeftovers();
    if (under().length > 0) await new Promise((r) => setTimeout(r, 50));
  }
  for (const b of bases) {
    if (rmdirQuiet(b)) leftovers.delete(b);
  }
}

/**
 * Parents of executors that died without closing (`kairos-<tag>-<pid>` whose pid is gone): what is
 * still in their attempt groups is killed (nothing of a dead executor's runs may go on unwatched),
 * then the groups and the parents are removed; a group still busy with an exiting process is
 * retried at the next create and at close. Groups of live executors are never touched.
 */
function sweepDeadParents(root: string): void {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^kairos-[0-9a-z]+-(\d+)$/.exec(name);
    if (!m || Number(m[1]) === process.pid || alive(Number(m[1]))) continue;
    const parent = join(root, name);
    try {
      for (const child of readdirSync(parent, { withFileTypes: true })) {
        if (!child.isDirectory()) continue;
        killPids(join(parent, child.name, "cgroup.procs"));
        rmdirQuiet(join(parent, child.name));
      }
    } catch {
      // gone meanwhile
    }
    rmdirQuiet(parent);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** cgroup v1: a directory per attempt in each of the memory, pids, cpu and cpuacct hierarchies. */
class CgroupsV1 implements Cgroups {
  readonly version = 1 as const;
  readonly enforces = ["memory", "cpu", "pids"] as const;
  constructor(private readonly bases: { memory: string; pids: string; cpu: string; cpuacct: string }) {}

  close(): Promise<void> {
    return closeBases([...new Set(Object.values(this.bases))]);
  }

  create(name: string, limits: CgroupLimits): AttemptCgroup {
    const b = this.bases;
    const dirs = { memory: join(b.memory, name), pids: join(b.pids, name), cpu: join(b.cpu, name), cpuacct: join(b.cpuacct, name) };
    const unique = [...new Set(Object.values(dirs))];
    retryLeftovers();
    for (const d of unique) mkdirSync(d, { recursive: true });
    try {
      const bytes = String(Math.round(limits.memoryMb * 1048576));
      write(join(dirs.memory, "memory.limit_in_bytes"), bytes);
      write(join(dirs.pids, "pids.max"), String(limits.pids));
      write(join(dirs.cpu, "cpu.cfs_period_us"), String(CFS_PERIOD_US));
      write(join(dirs.cpu, "cpu.cfs_quota_us"), String(Math.max(1_000, Math.round(limits.cpu * CFS_PERIOD_US))));
    } catch (e) {
      for (const d of unique) rmdirQuiet(d);
      throw e;
    }
    return {
      procsFiles: unique.map((d) => join(d, "cgroup.procs")),
      usage: () => {
        const peak = readNum(join(dirs.memory, "memory.max_usage_in_bytes"));
        const cpuNs = readNum(join(dirs.cpuacct, "cpuacct.usage"));
        return {
          peakMemoryMb: peak === null ? null : Math.round((peak / 1048576) * 10) / 10,
          cpuSeconds: cpuNs === null ? null : Math.round(cpuNs / 1e6) / 1e3,
          oomKilled: (readKey(join(dirs.memory, "memory.oom_control"), "oom_kill") ?? 0) > 0,
        };
      },
      killAll: () => killPids(join(dirs.pids, "cgroup.procs")),
      remove: () => {
        for (const d of unique) rmdirQuiet(d);
      },
      release: async () => {
        await killPidsAsync(join(dirs.pids, "cgroup.procs"));
        await Promise.all(unique.map(rmdirQuietAsync));
      },
    };
  }
}

/** cgroup v2: one directory per attempt, with the controllers enabled in its parent. */
class CgroupsV2 implements Cgroups {
  readonly version = 2 as const;
  readonly enforces = ["memory", "cpu", "pids"] as const;
  constructor(private readonly base: string) {}

  close(): Promise<void> {
    return closeBases([this.base]);
  }

  create(name: string, limits: CgroupLimits): AttemptCgroup {
    const dir = join(this.base, name);
    retryLeftovers();
    mkdirSync(dir);
    try {
      write(join(dir, "memory.max"), String(Math.round(limits.memoryMb * 1048576)));
      write(join(dir, "memory.swap.max"), "0");
      write(join(dir, "pids.max"), String(limits.pids));
      write(join(dir, "cpu.max"), `${Math.max(1_000, Math.round(limits.cpu * CFS_PERIOD_US))} ${CFS_PERIOD_US}`);
    } catch (e) {
      rmdirQuiet(dir);
      throw e;
    }
    return {
      procsFiles: [join(dir, "cgroup.procs")],
      usage: () => {
        const peak = readNum(join(dir, "memory.peak"));
        const cpuUs = readKey(join(dir, "cpu.stat"), "usage_usec");
        return {
          peakMemoryMb: peak === null ? null : Math.round((peak / 1048576) * 10) / 10,
          cpuSeconds: cpuUs === null ? null : Math.round(cpuUs / 1e3) / 1e3,
          oomKilled: (readKey(join(dir, "memory.events"), "oom_kill") ?? 0) > 0,
        };
      },
      killAll: () => {
        try {
          write(join(dir, "cgroup.kill"), "1");
        } catch {
          killPids(join(dir, "cgroup.procs"));
        }
      },
      remove: () => rmdirQuiet(dir),
      release: async () => {
        try {
          await writeFile(join(dir, "cgroup.kill"), "1");
        } catch {
          await killPidsAsync(join(dir, "cgroup.procs"));
        }
        await rmdirQuietAsync(dir);
      },
    };
  }
}

/**
 * The cgroups this process may manage, under `<own group>/<parent>` in each hierarchy, or the
 * reason there are none (not Linux, read-only /sys/fs/cgroup in an unprivileged container, a
 * controller missing). Probes by making and removing a test group.
 */
export function openCgroups(parent: string): { cgroups: Cgroups } | { cgroups: null; reason: string } {
  try {
    const own = ownGroups();
    const v2Only = own.size === 1 && own.has("");
    if (v2Only) {
      sweepDeadParents(join(ROOT, own.get("")!));
      const base = join(ROOT, own.get("")!, parent);
      mkdirSync(base, { recursive: true });
      // Controllers must be enabled for the children of `base`.
      const available = readFileSync(join(base, "cgroup.controllers"), "utf8").split(/\s+/);
      for (const c of ["memory", "pids", "cpu"]) {
        if (!available.includes(c)) return { cgroups: null, reason: `cgroup v2 controller "${c}" is not available under ${base}` };
      }
      write(join(base, "cgroup.subtree_control"), "+memory +pids +cpu");
      const cg = new CgroupsV2(base);
      cg.create(`probe-${process.pid}`, { cpu: 1, memoryMb: 64, pids: 8 }).remove();
      return { cgroups: cg };
    }
    const bases = {} as { memory: string; pids: string; cpu: string; cpuacct: string };
    for (const ctrl of ["memory", "pids", "cpu", "cpuacct"] as const) {
      const path = own.get(ctrl);
      if (path === undefined) return { cgroups: null, reason: `cgroup v1 controller "${ctrl}" is not mounted` };
      sweepDeadParents(join(ROOT, ctrl, path));
      bases[ctrl] = join(ROOT, ctrl, path, parent);
      mkdirSync(bases[ctrl], { recursive: true });
    }
    const cg = new CgroupsV1(bases);
    cg.create(`probe-${process.pid}`, { cpu: 1, memoryMb: 64, pids: 8 }).remove();
    return { cgroups: cg };
  } catch (e) {
    return { cgroups: null, reason: `cannot create cgroups (${(e as Error).message})` };
  }
}
