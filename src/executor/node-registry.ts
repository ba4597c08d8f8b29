/**
 * This executor's node document: what it publishes of itself (pools, labels, capacity, the
 * largest and the default run, isolation) when it comes online, its heartbeat (running attempts,
 * host usage), and its status as it drains and stops. Submission reads the published limits to
 * refuse runs no node of a pool would take (core/resources.ts).
 */
import { cpus, freemem, hostname, loadavg, totalmem } from "node:os";
import { coerceError } from "../domain/index.js";
import type { Logger } from "../support/index.js";
import type { NodeStore } from "../store/index.js";
import type { NodeDoc, NodeInterpreter, NodeIsolation } from "../domain/index.js";
import type { ResolvedOptions } from "./options.js";

export class NodeRegistry {
  constructor(
    private readonly nodeId: string,
    private readonly store: NodeStore,
    private readonly log: Logger,
  ) {}

  /** Publishes the node, ONLINE. */
  async register(o: ResolvedOptions, isolation: NodeIsolation, now: Date, interpreters: NodeInterpreter[] = []): Promise<void> {
    const node: NodeDoc = {
      _id: this.nodeId,
      name: o.nodeName,
      host: hostname(),
      pid: process.pid,
      pools: o.pools,
      labels: o.labels,
      capacity: { slots: o.slots, cpus: o.capacity.cpu, memoryMb: o.capacity.memoryMb },
      maxRun: o.runMax,
      defaultRun: o.runDefaults,
      isolation,
      interpreters,
      status: "ONLINE",
      running: 0,
      usage: usage(),
      startedAt: now,
      lastHeartbeatAt: now,
    };
    await this.store.insert(node);
  }

  /** Refreshes the heartbeat; `online` (still taking work) also says ONLINE again. Failures are logged, not thrown. */
  async heartbeat(now: Date, running: number, online: boolean): Promise<void> {
    await this.store
      .beat(this.nodeId, { at: now, running, usage: usage(), ...(online ? { status: "ONLINE" } : {}) })
      .catch((e) => this.log.warn({ err: coerceError(e) }, "node heartbeat failed"));
  }

  /** Best effort: a node that cannot say so still stops taking work. */
  async draining(): Promise<void> {
    await this.store.setStatus(this.nodeId, "DRAINING").catch(() => undefined);
  }

  /** Best effort: readers also tell a dead node by its heartbeat. */
  async offline(now: Date): Promise<void> {
    await this.store.markOffline(this.nodeId, now).catch(() => undefined);
  }
}

function usage(): NodeDoc["usage"] {
  const load1 = loadavg()[0] ?? 0;
  return {
    cpuPercent: Math.min(100, Math.round((load1 / Math.max(1, cpus().length)) * 100)),
    memoryMb: Math.round((totalmem() - freemem()) / 1048576),
    load1: Math.round(load1 * 100) / 100,
  };
}
