/**
 * The only place that knows the Redis key layout (docs/redis-layout.md). Every key of shard `s`
 * carries the hash tag `{s}`, so one shard's keys live on one Redis Cluster slot and a script can
 * touch all of them. `prefix` namespaces a deployment (tests use a random one); it must not
 * contain `{` or `}`, which would change the hash tag.
 */
export interface ShardKeys {
  /** ZSET timer id → due time (ms). The wheel proper. */
  wheel: string;
  /** ZSET timer id → in-flight deadline (ms): claimed, not yet completed. */
  inflight: string;
  /** HASH timer id → due time it was claimed at; exactly the ids in `inflight`. */
  due: string;
  /** HASH holder, epoch, expiresAt: the shard lease. PEXPIRE'd as garbage collection only. */
  lease: string;
  /** STRING the shard's fencing epoch; only ever raised (see lua/acquire-2.ts), never expires. */
  epoch: string;
}

export interface RedisKeys {
  shard(s: number): ShardKeys;
  /** ZSET (scores 0) of `<owner>\0<readyScore, 14 digits><runId>`: the runs queued in a pool, in lex order. */
  ready(pool: string): string;
  /** ZSET owner → turn: the owners with runs queued in a pool, served lowest turn first. */
  readyOwners(pool: string): string;
  /** ZSET runId → notBefore (ms): runs staged ahead of their time, per pool. */
  readyLater(pool: string): string;
  /** HASH runId → `<member of ready><payload>` of queued or staged runs, `|turn` → the turn after the last run taken; per pool. */
  readyData(pool: string): string;
  /** ZSET runId → claim marker expiry (ms): taken runs whose claim is being confirmed, per pool. */
  readyClaims(pool: string): string;
  /** SET of owner ids with a per-user concurrency limit (mirror of MongoDB users). */
  limitedOwners: string;
  /** STRING ms: since when this deployment's Redis data has been intact (set once, NX; gone after a flush). */
  intactSince: string;
  /**
   * STRING the store's generation: a random id written once (SET NX) by the first caller after the
   * store started empty, never expiring. A scheduler that reads another id than before (or writes a
   * new one) knows the store lost its data in between (flush, restart without persistence, failover
   * to a replica that missed writes) and rebuilds it from MongoDB (src/scheduler/store-watch.ts).
   */
  generation: string;
  /** ZSET member id → heartbeat expiry (ms). */
  members: string;
  /** The pub/sub channel carrying a logical EventBus channel for this deployment. */
  channel(name: string): string;
  /** Pattern matching every key of this deployment (for cleanup and inspection). */
  pattern: string;
}

export function redisKeys(prefix: string): RedisKeys {
  if (/[{}]/.test(prefix)) throw new RangeError(`redis prefix must not contain braces: ${prefix}`);
  return {
    shard: (s) => ({
      wheel: `${prefix}:tw:{${s}}`,
      inflight: `${prefix}:tw:{${s}}:inflight`,
      due: `${prefix}:tw:{${s}}:due`,
      lease: `${prefix}:lease:{${s}}`,
      epoch: `${prefix}:epoch:{${s}}`,
    }),
    // `:runs` and `:entries`, not the `ready:{pool}` and `:data` of the version before turns (of
    // another shape; the runs left there, invisible here, are queued again by the reaper).
    ready: (pool) => `${prefix}:ready:{${pool}}:runs`,
    readyOwners: (pool) => `${prefix}:ready:{${pool}}:owners`,
    readyLater: (pool) => `${prefix}:ready:{${pool}}:later`,
    readyData: (pool) => `${prefix}:ready:{${pool}}:entries`,
    readyClaims: (pool) => `${prefix}:ready:{${pool}}:claims`,
    limitedOwners: `${prefix}:limited-owners`,
    intactSince: `${prefix}:intact-since`,
    generation: `${prefix}:generation`,
    members: `${prefix}:members`,
    channel: (name) => `${prefix}:bus:${name}`,
    pattern: `${prefix}:*`,
  };
}
