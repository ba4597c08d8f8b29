import { randomUUID } from "node:crypto";
import type { Millis, ShardCoordinator, ShardFence } from "../ports.js";
import { checkShard, checkTime } from "../checks.js";

interface Lease {
  holder: string;
  epoch: number;
  expiresAt: Millis;
}

/** Why a fenced operation was refused; mirrors the Redis scripts' status codes. */
export type FenceRefusal = "epoch-superseded" | "lease-released" | "lease-expired";

/**
 * Membership and shard leases for one process. Same rules as the Redis adapter:
 * - a lease is valid while `expiresAt > now`;
 * - every new acquisition (free, expired, or our own expired lease) raises the shard's epoch to
 *   max(previous + 1, floor(now)); re-acquiring our own still-valid lease extends it and keeps the
 *   epoch;
 * - fenced wheel operations pass only while the caller's epoch is current and its lease exists
 *   (and, when the caller passes `now`, is unexpired).
 */
export class MemoryShardCoordinator implements ShardCoordinator {
  private readonly memberExpiry = new Map<string, Millis>();
  private readonly leases = new Map<number, Lease>();
  private readonly epochs = new Map<number, number>();
  /** One process's memory is never lost while the process lives: one generation for its life. */
  private readonly gen = randomUUID();

  constructor(readonly shardCount: number) {}

  async heartbeat(memberId: string, now: Millis, ttlMs: number): Promise<void> {
    checkTime("now", now);
    this.memberExpiry.set(memberId, now + ttlMs);
    // Garbage: members expired for at least one ttl. members(now) filters by expiry anyway.
    for (const [m, exp] of this.memberExpiry) if (exp <= now - ttlMs) this.memberExpiry.delete(m);
  }

  async members(now: Millis): Promise<string[]> {
    const live: string[] = [];
    for (const [m, exp] of this.memberExpiry) if (exp > now) live.push(m);
    return live.sort();
  }

  async leave(memberId: string): Promise<void> {
    this.memberExpiry.delete(memberId);
  }

  async acquire(shard: number, memberId: string, now: Millis, ttlMs: number): Promise<number | null> {
    checkShard(shard, this.shardCount);
    checkTime("now", now);
    const lease = this.leases.get(shard);
    if (lease && lease.expiresAt > now) {
      if (lease.holder !== memberId) return null;
      lease.expiresAt = now + ttlMs;
      return lease.epoch;
    }
    const epoch = Math.max((this.epochs.get(shard) ?? 0) + 1, Math.floor(now));
    this.epochs.set(shard, epoch);
    this.leases.set(shard, { holder: memberId, epoch, expiresAt: now + ttlMs });
    return epoch;
  }

  async renew(shard: number, memberId: string, epoch: number, now: Millis, ttlMs: number): Promise<boolean> {
    checkShard(shard, this.shardCount);
    if (this.fenceRefusal({ shard, epoch }, now) !== null) return false;
    const lease = this.leases.get(shard)!;
    if (lease.holder !== memberId) return false;
    lease.expiresAt = now + ttlMs;
    return true;
  }

  async release(shard: number, memberId: string, epoch: number): Promise<void> {
    checkShard(shard, this.shardCount);
    const lease = this.leases.get(shard);
    if (lease && lease.holder === memberId && lease.epoch === epoch) this.leases.delete(shard);
  }

  async holder(shard: number, now: Millis): Promise<{ memberId: string; epoch: number } | null> {
    checkShard(shard, this.shardCount);
    const lease = this.leases.get(shard);
    return lease && lease.expiresAt > now ? { memberId: lease.holder, epoch: lease.epoch } : null;
  }

  async generation(): Promise<string> {
    return this.gen;
  }

  /** The fencing rule of claimDue/complete/replayInflight; null means the fence holds. */
  fenceRefusal(fence: ShardFence, now: Millis | undefined): FenceRefusal | null {
    if ((this.epochs.get(fence.shard) ?? 0) !== fence.epoch) return "epoch-superseded";
    const lease = this.leases.get(fence.shard);
    if (!lease || lease.epoch !== fence.epoch) return "lease-released";
    if (now !== undefined && lease.expiresAt <= now) return "lease-expired";
    return null;
  }

  async close(): Promise<void> {}
}
