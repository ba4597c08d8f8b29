import { randomUUID } from "node:crypto";
import type { Millis, ShardCoordinator } from "../ports.js";
import { checkShard, ms } from "./checks.js";
import type { SharedConnection } from "./connection.js";
import { primaryTerms } from "./primaries.js";
import type { RedisKeys } from "./keys.js";
import { scripts } from "./lua/all.js";
import type { ScriptRunner } from "./scripts.js";

/**
 * Membership and shard leases on Redis. A lease is valid while its `expiresAt` (computed from the
 * caller's `now`) is later than the reader's `now`; Redis's own clock only drives the PEXPIRE that
 * collects abandoned leases `gcMarginMs` after they lapse. Epochs live in their own key, which never
 * expires, so they only ever grow.
 */
export class RedisShardCoordinator implements ShardCoordinator {
  private readonly drop: () => Promise<void>;

  constructor(
    readonly shardCount: number,
    private readonly conn: SharedConnection,
    private readonly run: ScriptRunner,
    private readonly keys: RedisKeys,
    private readonly gcMarginMs: number,
  ) {
    this.drop = conn.retain();
  }

  async heartbeat(memberId: string, now: Millis, ttlMs: number): Promise<void> {
    await this.run.run(scripts.heartbeat, [this.keys.members], [memberId, ms("expiry", now + ttlMs), ms("forget", now - ttlMs)]);
  }

  async members(now: Millis): Promise<string[]> {
    const live = await this.conn.redis.zrangebyscore(this.keys.members, `(${ms("now", now)}`, "+inf");
    return live.sort();
  }

  async leave(memberId: string): Promise<void> {
    await this.conn.redis.zrem(this.keys.members, memberId);
  }

  async acquire(shard: number, memberId: string, now: Millis, ttlMs: number): Promise<number | null> {
    const k = this.shardKeys(shard);
    const epoch = (await this.run.run(scripts.acquire, [k.lease, k.epoch], [
      memberId,
      ms("now", now),
      ms("expiresAt", now + ttlMs),
      this.gcTtl(ttlMs),
    ])) as number;
    return epoch === 0 ? null : epoch;
  }

  async renew(shard: number, memberId: string, epoch: number, now: Millis, ttlMs: number): Promise<boolean> {
    const k = this.shardKeys(shard);
    const ok = await this.run.run(scripts.renew, [k.lease, k.epoch], [
      memberId,
      epoch,
      ms("now", now),
      ms("expiresAt", now + ttlMs),
      this.gcTtl(ttlMs),
    ]);
    return ok === 1;
  }

  async release(shard: number, memberId: string, epoch: number): Promise<void> {
    await this.run.run(scripts.release, [this.shardKeys(shard).lease], [memberId, epoch]);
  }

  async holder(shard: number, now: Millis): Promise<{ memberId: string; epoch: number } | null> {
    const [memberId, epoch, expiresAt] = await this.conn.redis.hmget(this.shardKeys(shard).lease, "holder", "epoch", "expiresAt");
    if (memberId == null || epoch == null || expiresAt == null || Number(expiresAt) <= now) return null;
    return { memberId, epoch: Number(epoch) };
  }

  /**
   * The store's marker (a write-once key: a flush or a restart without data removes it) and the
   * replication ids of the primaries it lives on (a promoted replica, which may lack the last
   * writes its primary acknowledged, starts a new one): `<marker>@<replid>,<replid>,…`. Read in
   * parallel, so a failover between the two reads shows in the next call.
   */
  async generation(): Promise<string> {
    const fresh = randomUUID();
    const [marker, terms] = await Promise.all([
      this.conn.redis.multi().set(this.keys.generation, fresh, "NX").get(this.keys.generation).exec(),
      primaryTerms(this.conn.redis),
    ]);
    const [[setErr], [getErr, got]] = marker as [[Error | null, unknown], [Error | null, string | null]];
    if (setErr || getErr) throw setErr ?? getErr;
    return `${got ?? fresh}@${terms.join(",")}`; // not a fire key: the store generation (marker@primary terms)
  }

  close(): Promise<void> {
    return this.drop();
  }

  /** PEXPIRE of the lease hash: its ttl plus a margin, so clock skew never collects a live lease. */
  private gcTtl(ttlMs: number): number {
    return Math.max(1, Math.ceil(ttlMs + this.gcMarginMs));
  }

  private shardKeys(shard: number) {
    checkShard(shard, this.shardCount);
    return this.keys.shard(shard);
  }
}
