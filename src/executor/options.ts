/** The executor's options, their defaults, and the timings derived from them. */
import { cpus, totalmem } from "node:os";
import { DEFAULT_RESOURCES } from "../core/index.js";
import type { ResourceRequest } from "../domain/index.js";
import type { HttpTargetRules } from "../core/index.js";
import type { SandboxMode } from "./sandbox/sandbox.js";

export interface ExecutorOptions {
  nodeName: string;
  pools: string[];
  slots: number;
  /** Directory under which each attempt gets a fresh working directory. */
  workRoot: string;
  /** @default 30 s */
  leaseMs?: number;
  /**
   * Attempts whose process ended but whose claim or result is still being written, at most; half
   * of it held back while the executor is starting due runs (see reportHoldMs). @default 32,768
   */
  reportBacklog?: number;
  /**
   * While every free slot keeps being filled with due runs, results of ended runs wait up to this
   * long (or until half the backlog holds them) and are then written in large batches: during a
   * burst, starting runs on time comes before writing down runs that ended. Their `finishedAt`
   * is when they ended. @default 2 s (at most a tenth of the lease)
   */
  reportHoldMs?: number;
  /**
   * A run taken with its payload is confirmed this long after it started; one that ends sooner
   * reports its claim and its result in one write. @default 1 s (at most a tenth of the lease)
   */
  confirmDelayMs?: number;
  /** Safety poll of the ready queues when no wake-up arrives. @default 1 s */
  pollMs?: number;
  /** Lease renewal and node heartbeat period. @default leaseMs / 3 */
  heartbeatMs?: number;
  /** On stop: how long running attempts may finish before they are handed back. @default 30 s */
  drainGraceMs?: number;
  labels?: Record<string, string>;
  /**
   * How runs are isolated (see sandbox/sandbox.ts). `auto` (dev): bubblewrap where it works, else
   * plain processes with a loud warning. @default bubblewrap
   */
  sandbox?: SandboxMode | "auto";
  /** Start sandboxed runs through the launcher in a sandbox kept per slot (sandbox/launcher.ts). @default true */
  sandboxLauncher?: boolean;
  /** Slot i runs as uid/gid sandboxUidBase + i. @default 61000 */
  sandboxUidBase?: number;
  /** Extra host paths bound read-only into every sandbox. @default none */
  sandboxRoPaths?: string[];
  /** Host paths bound writable into every sandbox (shared by all jobs on the node). @default none */
  sandboxRwPaths?: string[];
  /** Offer EGRESS network access (sandbox/egress.ts). @default null: not offered */
  sandboxEgress?: { subnet: string; deny: readonly string[] } | null;
  /** CPU and memory the runs of this node may reserve in total. @default cpu: the larger of 2 × cores and slots × the default cpu; memory: all of it */
  capacity?: { cpu: number; memoryMb: number };
  /** What a run of this node's pools gets when its job leaves a resource out. @default core/resources DEFAULT_RESOURCES */
  runDefaults?: ResourceRequest;
  /** The most one run may ask for on this node. @default cpu: cores, memory: all, pids 4096, disk 10 GiB */
  runMax?: ResourceRequest;
  /** SCRIPT interpreters this node offers, of those it has (KAIROS_INTERPRETERS). @default null: every one it has */
  interpreters?: string[] | null;
  /** Where HTTP jobs may connect beyond public addresses, and what else is refused (core/ssrf.ts). @default public addresses only */
  httpTargets?: HttpTargetRules;
}

export type ResolvedOptions = Required<ExecutorOptions>;

export function resolveOptions(opts: ExecutorOptions): ResolvedOptions {
  const leaseMs = opts.leaseMs ?? 30_000;
  return {
    leaseMs,
    pollMs: 1_000,
    heartbeatMs: Math.max(50, Math.floor(leaseMs / 3)),
    drainGraceMs: 30_000,
    reportBacklog: 32_768,
    reportHoldMs: Math.min(2_000, Math.floor(leaseMs / 10)),
    confirmDelayMs: Math.min(1_000, Math.floor(leaseMs / 10)),
    labels: {},
    sandbox: "bubblewrap",
    sandboxLauncher: true,
    sandboxUidBase: 61_000,
    sandboxRoPaths: [],
    sandboxRwPaths: [],
    sandboxEgress: null,
    // CPU is a ceiling per run (a CFS quota), not a reservation that could run out: by default
    // every slot may hold a run of the default size, so slots are what limits a node.
    capacity: { cpu: Math.max(cpus().length * 2, opts.slots * (opts.runDefaults ?? DEFAULT_RESOURCES).cpu), memoryMb: Math.floor(totalmem() / 1048576) },
    runDefaults: DEFAULT_RESOURCES,
    runMax: { cpu: cpus().length, memoryMb: Math.floor(totalmem() / 1048576), pids: 4096, diskMb: 10_240 },
    interpreters: null,
    httpTargets: { allowedCidrs: [], deniedCidrs: [] },
    ...opts,
  };
}

/**
 * How long an attempt may run after its claim or its last lease renewal: the lease minus a safety
 * margin (a heartbeat period, at least a fifth of the lease). If renewals keep failing it is killed
 * then, before the lease ends, so the reaper never hands a run on while its old attempt still runs.
 */
export function leaseSafeMs(o: Pick<ResolvedOptions, "leaseMs" | "heartbeatMs">): number {
  return Math.max(10, o.leaseMs - Math.max(o.heartbeatMs, Math.floor(o.leaseMs / 5)));
}
