import { Channels, readyScore, type ReadyEntry, type ReadyQueue } from "../ports.js";
import { checkCount } from "./checks.js";
import type { SharedConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";
import { scripts } from "./lua/index.js";
import type { ScriptRunner } from "./scripts.js";

/**
 * Ready queues on Redis: one ZSET per pool, score = readyScore(entry) (priority, then enqueue
 * time; exact in a double), ties by runId. ZPOPMIN is atomic, so concurrent executors never take
 * the same run; push is ZADD NX inside a script that also wakes the pool's executors.
 */
export class RedisReadyQueue implements ReadyQueue {
  private readonly drop: () => Promise<void>;

  constructor(
    private readonly conn: SharedConnection,
    private readonly run: ScriptRunner,
    private readonly keys: RedisKeys,
  ) {
    this.drop = conn.retain();
  }

  async push(pool: string, entries: readonly ReadyEntry[]): Promise<void> {
    const args: (string | number)[] = [];
    for (const e of entries) args.push(String(readyScore(e)), e.runId); // validates every entry before any write
    if (args.length === 0) return;
    await this.run.run(scripts.pushReady, [this.keys.ready(pool)], [this.keys.channel(Channels.readyWake(pool)), pool, ...args]);
  }

  async pop(pool: string, max: number): Promise<string[]> {
    checkCount("max", max);
    if (max === 0) return [];
    const flat = await this.conn.redis.zpopmin(this.keys.ready(pool), max); // [id, score, id, score, ...]
    return flat.filter((_, i) => i % 2 === 0);
  }

  async remove(pool: string, runId: string): Promise<boolean> {
    return (await this.conn.redis.zrem(this.keys.ready(pool), runId)) === 1;
  }

  async contains(pool: string, runId: string): Promise<boolean> {
    return (await this.conn.redis.zscore(this.keys.ready(pool), runId)) !== null;
  }

  size(pool: string): Promise<number> {
    return this.conn.redis.zcard(this.keys.ready(pool));
  }

  close(): Promise<void> {
    return this.drop();
  }
}
