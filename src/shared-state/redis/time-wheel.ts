import { Channels, type DueTimer, type Millis, type ShardFence, type TimerId, type TimeWheel } from "../ports.js";
import { checkCount, checkShard, ms } from "./checks.js";
import { scriptError } from "./codes.js";
import type { SharedConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";
import { scripts } from "./lua/all.js";
import type { ScriptRunner } from "./scripts.js";

/**
 * The time wheel on Redis: per shard a ZSET of armed timers, a ZSET of in-flight deadlines and a
 * HASH of the due times the in-flight ids were claimed at. Each transition is one Lua script
 * (lua/*.ts); claimDue, complete and replayInflight are fenced by the shard's epoch and lease.
 */
export class RedisTimeWheel implements TimeWheel {
  private readonly drop: () => Promise<void>;

  constructor(
    readonly shardCount: number,
    private readonly conn: SharedConnection,
    private readonly run: ScriptRunner,
    private readonly keys: RedisKeys,
  ) {
    this.drop = conn.retain();
  }

  async arm(shard: number, id: TimerId, dueAt: Millis): Promise<void> {
    const k = this.shardKeys(shard);
    // Published from inside the script: the wake-up is sent only if the arm happened, and only
    // when the timer became the shard's minimum (nobody sleeps past a later one).
    await this.run.run(scripts.arm, [k.wheel, k.inflight, k.due], [
      ms("dueAt", dueAt),
      id,
      this.keys.channel(Channels.wheelWake),
      JSON.stringify({ shard, dueAt }),
    ]);
  }

  async disarm(shard: number, id: TimerId): Promise<void> {
    const k = this.shardKeys(shard);
    await this.run.run(scripts.disarm, [k.wheel, k.inflight, k.due], [id]);
  }

  async claimDue(fence: ShardFence, now: Millis, limit: number, inflightMs: number): Promise<DueTimer[]> {
    const k = this.shardKeys(fence.shard);
    checkCount("limit", limit);
    const reply = await this.run.run(scripts.claimDue, [k.wheel, k.inflight, k.due, k.lease, k.epoch], [
      fence.epoch,
      ms("now", now),
      limit,
      ms("deadline", now + inflightMs),
    ]);
    if (typeof reply === "number") throw scriptError(reply, { ...fence, op: "claimDue" });
    const flat = reply as string[];
    const out: DueTimer[] = [];
    for (let i = 0; i < flat.length; i += 2) out.push({ id: flat[i]!, dueAt: Number(flat[i + 1]) });
    return out;
  }

  async complete(fence: ShardFence, id: TimerId, nextDueAt: Millis | null, now?: Millis): Promise<void> {
    const k = this.shardKeys(fence.shard);
    const reply = (await this.run.run(scripts.complete, [k.wheel, k.inflight, k.due, k.lease, k.epoch], [
      fence.epoch,
      id,
      nextDueAt === null ? "" : ms("nextDueAt", nextDueAt),
      now === undefined ? "" : ms("now", now),
    ])) as number;
    if (reply < 0) throw scriptError(reply, { ...fence, op: "complete" });
  }

  async replayInflight(fence: ShardFence, now: Millis, all: boolean): Promise<number> {
    const k = this.shardKeys(fence.shard);
    const reply = (await this.run.run(scripts.replayInflight, [k.wheel, k.inflight, k.due, k.lease, k.epoch], [
      fence.epoch,
      ms("now", now),
      all ? "1" : "0",
    ])) as number;
    if (reply < 0) throw scriptError(reply, { ...fence, op: "replayInflight" });
    return reply;
  }

  async earliest(shards: readonly number[]): Promise<Millis | null> {
    if (shards.length === 0) return null;
    // One read per shard, not one pipeline: on a Cluster the shards' keys lie in different slots
    // (and nodes), which one pipeline cannot span. The connection's auto-pipelining still sends
    // the reads of one turn as one write per node.
    const wheels = shards.map((shard) => this.shardKeys(shard).wheel); // every shard checked before any read
    const replies = await Promise.all(wheels.map((wheel) => this.conn.redis.zrange(wheel, 0, 0, "WITHSCORES")));
    let min: Millis | null = null;
    for (const [, score] of replies) {
      if (score !== undefined && (min === null || Number(score) < min)) min = Number(score);
    }
    return min;
  }

  async dueAt(shard: number, id: TimerId): Promise<Millis | null> {
    const score = await this.conn.redis.zscore(this.shardKeys(shard).wheel, id);
    return score === null ? null : Number(score);
  }

  async isInflight(shard: number, id: TimerId): Promise<boolean> {
    return (await this.conn.redis.zscore(this.shardKeys(shard).inflight, id)) !== null;
  }

  async size(shard: number): Promise<{ armed: number; inflight: number }> {
    const k = this.shardKeys(shard);
    // MULTI: one snapshot, so a claim in between cannot count a timer twice or not at all.
    const replies = (await this.conn.redis.multi().zcard(k.wheel).zcard(k.inflight).exec())!;
    const [armed, inflight] = replies.map(([err, n]) => {
      if (err) throw err;
      return n as number;
    });
    return { armed: armed!, inflight: inflight! };
  }

  close(): Promise<void> {
    return this.drop();
  }

  private shardKeys(shard: number) {
    checkShard(shard, this.shardCount);
    return this.keys.shard(shard);
  }
}
