import {
  Channels,
  StaleEpochError,
  type DueTimer,
  type EventBus,
  type Millis,
  type ShardFence,
  type TimerId,
  type TimeWheel,
} from "../ports.js";
import { checkCount, checkShard, checkTime } from "../checks.js";
import type { MemoryShardCoordinator } from "./coordinator.js";
import { IndexedHeap } from "./indexed-heap.js";

/**
 * One shard. Invariants (the same ones the Redis keys keep):
 * - an id is in at most one of `armed` and `inflight`;
 * - `originalDue` has an entry exactly for the ids in `inflight`.
 */
class Shard {
  /** id → due time. */
  readonly armed = new IndexedHeap();
  /** id → in-flight deadline. */
  readonly inflight = new IndexedHeap();
  /** id → the due time it was claimed at, restored by replay. */
  readonly originalDue = new Map<TimerId, Millis>();

  unflight(id: TimerId): boolean {
    this.originalDue.delete(id);
    return this.inflight.delete(id);
  }
}

/**
 * The time wheel for `kairos dev`. Every method body runs synchronously, so each is one atomic
 * step, as its Lua counterpart is in Redis. Heaps keep arm/claim/complete at O(log n).
 */
export class MemoryTimeWheel implements TimeWheel {
  private readonly shards: Shard[];

  constructor(
    readonly shardCount: number,
    private readonly coordinator: MemoryShardCoordinator,
    private readonly bus: EventBus,
  ) {
    this.shards = Array.from({ length: shardCount }, () => new Shard());
  }

  async arm(shard: number, id: TimerId, dueAt: Millis): Promise<void> {
    const s = this.shard(shard);
    checkTime("dueAt", dueAt);
    s.unflight(id);
    s.armed.set(id, dueAt);
    // Only a new shard minimum can be earlier than what the shard's owner sleeps towards.
    if (s.armed.peek()!.key === id) await this.bus.publish(Channels.wheelWake, JSON.stringify({ shard, dueAt }));
  }

  async disarm(shard: number, id: TimerId): Promise<void> {
    const s = this.shard(shard);
    s.armed.delete(id);
    s.unflight(id);
  }

  async claimDue(fence: ShardFence, now: Millis, limit: number, inflightMs: number): Promise<DueTimer[]> {
    const s = this.fenced(fence, now, "claimDue");
    checkCount("limit", limit);
    checkTime("inflightMs", inflightMs);
    const claimed: DueTimer[] = [];
    while (claimed.length < limit) {
      const top = s.armed.peek();
      if (!top || top.score > now) break;
      s.armed.pop();
      s.inflight.set(top.key, now + inflightMs);
      s.originalDue.set(top.key, top.score);
      claimed.push({ id: top.key, dueAt: top.score });
    }
    return claimed;
  }

  async complete(fence: ShardFence, id: TimerId, nextDueAt: Millis | null, now?: Millis): Promise<void> {
    const s = this.fenced(fence, now, "complete");
    if (nextDueAt !== null) checkTime("nextDueAt", nextDueAt);
    // Not in flight any more: arm/disarm/replay decided after our claim, and that decision stands.
    if (!s.unflight(id)) return;
    if (nextDueAt !== null) s.armed.set(id, nextDueAt);
  }

  async replayInflight(fence: ShardFence, now: Millis, all: boolean): Promise<number> {
    const s = this.fenced(fence, now, "replayInflight");
    let moved = 0;
    for (let top = s.inflight.peek(); top && (all || top.score <= now); top = s.inflight.peek()) {
      s.armed.set(top.key, s.originalDue.get(top.key)!);
      s.unflight(top.key);
      moved++;
    }
    return moved;
  }

  async earliest(shards: readonly number[]): Promise<Millis | null> {
    let min: Millis | null = null;
    for (const shard of shards) {
      const top = this.shard(shard).armed.peek();
      if (top && (min === null || top.score < min)) min = top.score;
    }
    return min;
  }

  async dueAt(shard: number, id: TimerId): Promise<Millis | null> {
    return this.shard(shard).armed.score(id) ?? null;
  }

  async isInflight(shard: number, id: TimerId): Promise<boolean> {
    return this.shard(shard).inflight.score(id) !== undefined;
  }

  async size(shard: number): Promise<{ armed: number; inflight: number }> {
    const s = this.shard(shard);
    return { armed: s.armed.size, inflight: s.inflight.size };
  }

  async close(): Promise<void> {}

  private shard(shard: number): Shard {
    checkShard(shard, this.shardCount);
    return this.shards[shard]!;
  }

  private fenced(fence: ShardFence, now: Millis | undefined, op: string): Shard {
    const s = this.shard(fence.shard);
    if (now !== undefined) checkTime("now", now);
    const refusal = this.coordinator.fenceRefusal(fence, now);
    if (refusal !== null) throw new StaleEpochError(fence.shard, fence.epoch, `${op}: ${refusal}`);
    return s;
  }
}
