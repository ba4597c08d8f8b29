/**
 * This executor's node document: what it publishes of itself (pools, labels, capacity, the
 * largest and the default run, isolation) when it comes online, its heartbeat (running attempts,
 * host usage), and its status as it drains and stops. Submission reads the published limits to
 * refuse runs no node of a pool would take (core/resources.ts).
 *
 * The document is also the node's lease (store/nodes/lease.ts): the heartbeat is its renewal, one
 * write of one document whatever the node runs, under the epoch the node holds. Every claim is
 * made under that epoch; a scheduler that found the lease lapsed ends the epoch and queues its
 * runs again, and the heartbeat that finds it ended says so (the attempts are stopped by
 * Deadlines) and takes the next epoch.
 */
import { cpus, freemem, hostname, loadavg, totalmem } from "node:os";
import { coerceError } from "../domain/index.js";
import type { Logger } from "../support/index.js";
import { nextNodeEpoch, readNodeEpoch, renewNodeLease, type NodeBeat, type NodeStore, type Mongo } from "../store/index.js";
import type { NodeDoc, NodeInterpreter, NodeIsolation } from "../domain/index.js";
import type { ResolvedOptions } from "./options.js";

/** What a heartbeat did to the node's lease. */
export type BeatResult =
  /** `epoch`'s lease now ends a lease after the beat was sent. */
  | { kind: "renewed"; epoch: number }
  /** `ended` (and every earlier epoch) was ended: its attempts are lost. `epoch`: the one now held (may still be `ended` if taking the next failed). */
  | { kind: "lost"; ended: number; epoch: number }
  /** The write failed: nothing is known (the attempts' deadlines stay). */
  | { kind: "failed" };

export class NodeRegistry {
  /** The lease epoch this node's claims are made under. */
  private held = 1;
  /** Every epoch up to this one is ended (0: none). */
  private endedThrough = 0;
  /** When the last renewal that succeeded was sent (clock ms). */
  private renewedAt = -Infinity;

  constructor(
    private readonly nodeId: string,
    private readonly store: NodeStore,
    private readonly mongo: Mongo,
    private readonly log: Logger,
    /** How long after a renewal's sending the node may still claim under it (options leaseSafeMs). */
    private readonly safeMs: number,
  ) {}

  /** The epoch claims are made under now. */
  get epoch(): number {
    return this.held;
  }

  /**
   * Whether the node may claim now: its epoch is not known ended, and its last renewal was sent
   * less than the safe time ago. So a claim is only ever sent under an epoch whose lease had not
   * lapsed yet; one that then lands after a scheduler ended the epoch is still queued again by it
   * (it looks at the node's runs for a lease after the end).
   */
  fresh(now: number): boolean {
    return this.held > this.endedThrough && now < this.renewedAt + this.safeMs;
  }

  /** Publishes the node, ONLINE, holding its first lease epoch. */
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
      leaseEpoch: this.held,
      leaseUntil: new Date(now.getTime() + o.leaseMs),
      leaseEnded: false,
      leaseMs: o.leaseMs,
      reclaimUntil: null,
    };
    await this.store.insert(node);
    this.renewedAt = now.getTime();
  }

  /**
   * The heartbeat, sent at `now`: renews the lease of the epoch held to `now + leaseMs` in the same
   * write; `online` (still taking work) also says ONLINE again. When the epoch was ended, takes the
   * next one. Failures are logged, not thrown.
   */
  async heartbeat(now: Date, running: number, online: boolean, leaseMs: number): Promise<BeatResult> {
    const beat: NodeBeat = { at: now, running, usage: usage(), ...(online ? { status: "ONLINE" } : {}) };
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const epoch = this.held;
    let renewed: boolean;
    try {
      renewed = await renewNodeLease(this.mongo, this.nodeId, epoch, leaseUntil, beat);
    } catch (e) {
      this.log.warn({ err: coerceError(e) }, "node heartbeat (lease renewal) failed; will retry");
      return { kind: "failed" };
    }
    if (renewed) {
      this.renewedAt = Math.max(this.renewedAt, now.getTime());
      return { kind: "renewed", epoch };
    }
    this.endedThrough = Math.max(this.endedThrough, epoch);
    this.log.error({ nodeId: this.nodeId, epoch }, "this node's lease lapsed and was ended: its attempts are lost (their runs are queued again); taking a new lease epoch");
    try {
      const next = (await nextNodeEpoch(this.mongo, this.nodeId, epoch, leaseUntil, beat)) ?? (await this.storedEpoch(epoch));
      if (next !== null) {
        this.held = next;
        this.renewedAt = now.getTime();
      }
    } catch (e) {
      this.log.warn({ err: coerceError(e) }, "could not take a new lease epoch; will retry with the next heartbeat");
    }
    return { kind: "lost", ended: epoch, epoch: this.held };
  }

  /** The node's epoch as stored when taking the next one after `ended` changed nothing: a later one not ended, or null. */
  private async storedEpoch(ended: number): Promise<number | null> {
    const stored = await readNodeEpoch(this.mongo, this.nodeId);
    return stored && stored.epoch > ended && !stored.ended ? stored.epoch : null;
  }

  /** Best effort: a node that cannot say so still stops taking work. */
  async draining(): Promise<void> {
    await this.store.setStatus(this.nodeId, "DRAINING").catch(() => undefined);
  }

  /**
   * Best effort: readers also tell a dead node by its heartbeat. Its lease is left to lapse: a
   * scheduler ends it then and queues again what the node could not hand back.
   */
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
