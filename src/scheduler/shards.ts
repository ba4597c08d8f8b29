/**
 * Shard ownership: which time-wheel shards this scheduler holds, with the epoch that fences its
 * writes to each. Membership heartbeat, rendezvous-hash rebalancing, lease acquire/renew/release,
 * and the membership notices that make the other schedulers rebalance at once.
 */
import type { Logger } from "../support/index.js";
import { coerceError } from "../domain/index.js";
import { Channels, rendezvousOwner, shardOf, StaleEpochError, type Clock, type ShardFence, type SharedState, type Unsubscribe } from "../shared-state/index.js";

export interface ShardOwnershipDeps {
  state: SharedState;
  clock: Clock;
  log: Logger;
  memberId: string;
  shardLeaseMs: number;
  stopped: () => boolean;
  /** Called with the shards a rebalance acquired (after their in-flight timers were put back). */
  onAcquired: (shards: number[]) => Promise<void>;
}

export class ShardOwnership {
  /** shard → epoch */
  readonly owned = new Map<number, number>();
  private rebalancing: Promise<void> = Promise.resolve();
  private rebalanceRunning: Promise<void> | null = null;
  private rebalanceAgain = false;
  private unsubscribe: Unsubscribe | null = null;

  constructor(private readonly deps: ShardOwnershipDeps) {}

  has(shard: number): boolean {
    return this.owned.has(shard);
  }

  /** True when the job's timers live in a shard this scheduler owns. */
  ownsJob(jobId: string): boolean {
    return this.owned.has(shardOf(jobId, this.deps.state.wheel.shardCount));
  }

  list(): number[] {
    return [...this.owned.keys()].sort((a, b) => a - b);
  }

  fences(): ShardFence[] {
    return [...this.owned].map(([shard, epoch]) => ({ shard, epoch }));
  }

  fence(shard: number): ShardFence {
    return { shard, epoch: this.owned.get(shard)! };
  }

  /** Listens for membership notices, takes this scheduler's shards and says it joined. */
  async join(): Promise<void> {
    this.unsubscribe = await this.deps.state.bus.subscribe(Channels.rebalance, (msg) => this.onRebalanceNotice(msg));
    await this.requestRebalance();
    await this.announce("joined");
  }

  /** The periodic heartbeat (a rebalance pass); leave() waits for it. */
  heartbeat(): Promise<void> {
    return (this.rebalancing = this.requestRebalance());
  }

  /** Waits for the rebalance passes in progress (before leave()). */
  async settle(): Promise<void> {
    await this.rebalancing;
    await this.rebalanceRunning;
  }

  /** Releases every shard and the membership, and says so (after the loops have stopped and settle()). */
  async leave(): Promise<void> {
    await this.unsubscribe?.();
    const { coordinator } = this.deps.state;
    const me = this.deps.memberId;
    for (const [shard, epoch] of this.owned) await coordinator.release(shard, me, epoch).catch(() => undefined);
    const had = this.owned.size;
    this.owned.clear();
    await coordinator.leave(me).catch(() => undefined);
    if (had > 0) await this.announce("released");
  }

  /** A shard write failed: a stale epoch means another scheduler took the shard over. */
  onShardError(fence: ShardFence, e: unknown): void {
    if (e instanceof StaleEpochError) {
      this.owned.delete(fence.shard);
      this.deps.log.warn({ shard: fence.shard, epoch: fence.epoch }, "shard taken over by another scheduler");
      return;
    }
    this.deps.log.error({ err: coerceError(e), shard: fence.shard }, "shard pass failed");
  }

  /** Runs rebalance(), one at a time; a request during a pass runs one more pass after it. */
  requestRebalance(): Promise<void> {
    if (this.rebalanceRunning) {
      this.rebalanceAgain = true;
      return this.rebalanceRunning;
    }
    const run = (async () => {
      try {
        do {
          this.rebalanceAgain = false;
          await this.rebalance();
        } while (this.rebalanceAgain && !this.deps.stopped());
      } finally {
        this.rebalanceRunning = null;
      }
    })();
    this.rebalanceRunning = run;
    return run;
  }

  private onRebalanceNotice(msg: string): void {
    if (this.deps.stopped()) return;
    try {
      if ((JSON.parse(msg) as { from?: string }).from === this.deps.memberId) return;
    } catch {
      // malformed: rebalancing once more is harmless
    }
    this.requestRebalance().catch((e) => this.deps.log.error({ err: coerceError(e) }, "rebalance after a membership notice failed"));
  }

  private async announce(reason: "joined" | "released"): Promise<void> {
    await this.deps.state.bus
      .publish(Channels.rebalance, JSON.stringify({ from: this.deps.memberId, reason }))
      .catch((e) => this.deps.log.warn({ err: coerceError(e) }, "could not announce a membership change"));
  }

  /**
   * Heartbeat, then take the shards rendezvous hashing gives us and let go of the others. Call it
   * through requestRebalance(): two passes at once would race on `owned`.
   */
  async rebalance(): Promise<void> {
    const { coordinator } = this.deps.state;
    const now = this.deps.clock();
    const me = this.deps.memberId;
    await coordinator.heartbeat(me, now, this.deps.shardLeaseMs);
    const members = await coordinator.members(now);
    if (!members.includes(me)) members.push(me);
    const acquired: number[] = [];
    let released = 0;
    for (let shard = 0; shard < this.deps.state.wheel.shardCount; shard++) {
      const mine = rendezvousOwner(shard, members) === me;
      const epoch = this.owned.get(shard);
      if (epoch !== undefined && !mine) {
        this.owned.delete(shard);
        await coordinator.release(shard, me, epoch);
        released++;
      } else if (epoch !== undefined) {
        await this.renew(shard, epoch, now);
      } else if (mine && (await this.acquire(shard, now))) {
        acquired.push(shard);
      }
    }
    if (released > 0) {
      this.deps.log.info({ shards: released, owned: this.owned.size, members: members.length }, "released shards");
      await this.announce("released");
    }
    if (acquired.length > 0) {
      this.deps.log.info({ shards: acquired.length, owned: this.owned.size, members: members.length }, "acquired shards");
      await this.deps.onAcquired(acquired);
    }
  }

  private async renew(shard: number, epoch: number, now: number): Promise<void> {
    if (await this.deps.state.coordinator.renew(shard, this.deps.memberId, epoch, now, this.deps.shardLeaseMs)) return;
    this.owned.delete(shard);
    this.deps.log.warn({ shard, epoch }, "lost shard lease");
  }

  private async acquire(shard: number, now: number): Promise<boolean> {
    const got = await this.deps.state.coordinator.acquire(shard, this.deps.memberId, now, this.deps.shardLeaseMs);
    if (got === null) return false;
    // A previous owner may have died with timers in flight: put them all back first.
    await this.deps.state.wheel.replayInflight({ shard, epoch: got }, now, true);
    this.owned.set(shard, got);
    return true;
  }
}
