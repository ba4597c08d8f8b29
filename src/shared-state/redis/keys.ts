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
  /**
   * ZSET (scores 0) of `<owner>\0<interpreter>\0<readyScore, 14 digits><runId>`: the runs queued in
   * a pool, of all its queues (interpreter empty for a plain run), in lex order.
   */
  ready(pool: string): string;
  /** ZSET owner → turn: the owners with runs queued in a pool, of any interpreter (one turn per owner). */
  readyOwners(pool: string): string;
  /**
   * ZSET owner → turn (the same as in readyOwners): the owners with runs queued in a pool that need
   * `interpreter` ("" for plain runs). A take reads those of the interpreters its node has.
   */
  readyTurns(pool: string, interpreter: string): string;
  /** ZSET runId → notBefore (ms): runs staged ahead of their time, per pool. */
  readyLater(pool: string): string;
  /** HASH runId → `<member of ready><payload>` of queued or staged runs, `|turn` → the turn after the last run taken; per pool. */
  readyData(pool: string): string;
  /** ZSET runId → claim marker expiry (ms): taken runs whose claim is being confirmed, per pool. */
  readyClaims(pool: string): string;
  /**
   * The keys of a ready queue (`<pool>` or `<pool>:<interpreter>`) as the version with turns per
   * queue kept them, under the queue's own hash tag: runs (ZSET `<owner>\0<score><runId>`), owners,
   * later, entries (HASH runId → `<member><payload>`), claims. Read once per pool and process to
   * adopt what is left there (RedisReadyQueue.adoptLegacy); never written.
   */
  legacyReady(queue: string): { runs: string; owners: string; later: string; entries: string; claims: string };
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
    // `:queued`, `:turns`, `:staged` and `:values`, not the `:runs`, `:owners`, `:later` and
    // `:entries` of the version with turns per queue (members without the interpreter), nor the
    // `ready:{pool}` and `:data` of the version before turns: the runs left there, invisible here,
    // are queued again by the reaper (docs/redis-layout.md, "Upgrading").
    ready: (pool) => `${prefix}:ready:{${pool}}:queued`,
    readyOwners: (pool) => `${prefix}:ready:{${pool}}:turns`,
    readyTurns: (pool, interpreter) => `${prefix}:ready:{${pool}}:turns:${interpreter === "" ? "-" : interpreter}`,
    readyLater: (pool) => `${prefix}:ready:{${pool}}:staged`,
    readyData: (pool) => `${prefix}:ready:{${pool}}:values`,
    readyClaims: (pool) => `${prefix}:ready:{${pool}}:claims`,
    legacyReady: (queue) => ({
      runs: `${prefix}:ready:{${queue}}:runs`,
      owners: `${prefix}:ready:{${queue}}:owners`,
      later: `${prefix}:ready:{${queue}}:later`,
      entries: `${prefix}:ready:{${queue}}:entries`,
      claims: `${prefix}:ready:{${queue}}:claims`,
    }),
    limitedOwners: `${prefix}:limited-owners`,
    intactSince: `${prefix}:intact-since`,
    generation: `${prefix}:generation`,
    members: `${prefix}:members`,
    channel: (name) => `${prefix}:bus:${name}`,
    pattern: `${prefix}:*`,
  };
}
