import { Channels, READY_SCORE_DIGITS, readyScore, type ClaimMarker, type Millis, type ReadyEntry, type ReadyQueue, type TakenEntry } from "../ports.js";
import { checkCount, ms } from "./checks.js";
import { READY_INTERPRETERS, readyQueueParts, takeParts } from "../checks.js";
import type { SharedConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";
import { scripts } from "./lua/index.js";
import type { ScriptRunner } from "./scripts.js";

/**
 * An entry's member of the pool's queued ZSET: its owner, the interpreter it needs ("" for none),
 * then its score (fixed width) and id, so lex order is the owner's order per interpreter.
 */
function readyMember(e: ReadyEntry, interpreter: string, score: number): string {
  return `${e.ownerId}\0${interpreter}\0${String(score).padStart(READY_SCORE_DIGITS, "0")}${e.runId}`;
}

/** Staged runs promoted into the queue per take, at most (bounds one script's run time). */
const PROMOTE_PER_TAKE = 10_000;

/**
 * Ready queues on Redis, per pool, all its queues (plain runs and script runs of each interpreter)
 * in the pool's structures (all keys carry the pool's hash tag, and every key a script touches is
 * one of its KEYS): the queued runs as one ZSET in lex order, each member
 * `<owner>\0<interpreter>\0<readyScore, 14 digits><runId>`, so each owner's runs of an interpreter
 * sit together best first; a ZSET of the owners with runs queued by their turn (see ReadyQueue),
 * and one per interpreter of the owners with runs of it (same turns), which a take reads for the
 * interpreters its node has; a ZSET of staged runs by `notBefore`; a HASH of the entries' payloads,
 * members and the turn after the last run taken; a ZSET of claim markers. `take` is one script, so
 * concurrent executors never take the same run, and a staged run becomes takeable exactly when its
 * time comes, by whichever executor asks first.
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

  /** The turns ZSETs of every interpreter of `pool`, and their names as ARGV (count first). */
  private turnKeys(pool: string): { keys: string[]; names: string[] } {
    return { keys: READY_INTERPRETERS.map((i) => this.keys.readyTurns(pool, i)), names: [String(READY_INTERPRETERS.length), ...READY_INTERPRETERS] };
  }

  async push(queue: string, entries: readonly ReadyEntry[]): Promise<void> {
    const args: string[] = [];
    const { pool, interpreter } = readyQueueParts(queue);
    // readyScore validates every entry before any write.
    for (const e of entries) args.push(readyMember(e, interpreter, readyScore(e)), e.runId, e.notBefore === undefined ? "" : String(e.notBefore), e.payload ?? "");
    if (args.length === 0) return;
    const k = this.keys;
    await this.run.run(
      scripts.pushReady,
      [k.ready(pool), k.readyOwners(pool), k.readyLater(pool), k.readyData(pool), k.readyTurns(pool, interpreter)],
      [k.channel(Channels.readyWake(queue)), queue, ...args],
    );
  }

  async take(pool: string, max: number, now: Millis, claimMs: number, interpreters?: readonly string[]): Promise<{ taken: TakenEntry[]; nextAt: Millis | null }> {
    checkCount("max", max);
    checkCount("claimMs", claimMs);
    const has = takeParts(pool, interpreters);
    const k = this.keys;
    const turns = this.turnKeys(pool);
    const out = (await this.run.run(
      scripts.takeReady,
      [k.ready(pool), k.readyOwners(pool), k.readyLater(pool), k.readyData(pool), k.readyClaims(pool), ...turns.keys],
      [ms("now", now), max, claimMs, PROMOTE_PER_TAKE, ...turns.names, has.length, ...has],
    )) as [number, ...string[]];
    const taken: TakenEntry[] = [];
    for (let i = 1; i < out.length; i += 2) taken.push({ runId: out[i] as string, payload: (out[i + 1] as string) || null });
    const nextAt = Number(out[0]);
    return { taken, nextAt: nextAt < 0 ? null : nextAt };
  }

  async remove(queue: string, runId: string): Promise<boolean> {
    const { pool } = readyQueueParts(queue);
    const k = this.keys;
    const turns = this.turnKeys(pool);
    return (await this.run.run(scripts.unready, [k.ready(pool), k.readyOwners(pool), k.readyLater(pool), k.readyData(pool), ...turns.keys], [runId, ...turns.names])) === 1;
  }

  async contains(queue: string, runId: string, now: Millis): Promise<boolean> {
    const { pool } = readyQueueParts(queue);
    const k = this.keys;
    return (await this.run.run(scripts.queued, [k.readyData(pool), k.readyClaims(pool)], [runId, ms("now", now)])) === 1;
  }

  async intactSince(now: Millis): Promise<Millis> {
    const at = ms("now", now);
    const [[, , ], [, got]] = (await this.conn.redis.multi().set(this.keys.intactSince, at, "NX").get(this.keys.intactSince).exec()) as [[unknown, unknown], [unknown, string | null]];
    return Number(got ?? at);
  }

  async claimExpiry(queue: string, runId: string): Promise<Millis | null> {
    const score = await this.conn.redis.zscore(this.keys.readyClaims(readyQueueParts(queue).pool), runId);
    return score === null ? null : Number(score);
  }

  async claimMarkers(queue: string, until: Millis, limit: number): Promise<ClaimMarker[]> {
    checkCount("limit", limit);
    const flat = await this.conn.redis.zrangebyscore(this.keys.readyClaims(readyQueueParts(queue).pool), "-inf", ms("until", until), "WITHSCORES", "LIMIT", 0, limit);
    const out: ClaimMarker[] = [];
    for (let i = 0; i < flat.length; i += 2) out.push({ runId: flat[i]!, expiresAt: Number(flat[i + 1]) });
    return out;
  }

  async dropClaims(queue: string, markers: readonly ClaimMarker[]): Promise<void> {
    if (markers.length === 0) return;
    const { pool } = readyQueueParts(queue);
    const args: Array<string | number> = [];
    for (const m of markers) args.push(m.runId, ms("notAfter", m.expiresAt));
    await this.run.run(scripts.dropClaims, [this.keys.readyClaims(pool)], args);
  }

  async restoreClaims(queue: string, markers: readonly ClaimMarker[]): Promise<void> {
    if (markers.length === 0) return;
    const { pool } = readyQueueParts(queue);
    const args: Array<string | number> = [];
    for (const m of markers) args.push(ms("expiresAt", m.expiresAt), m.runId);
    await this.conn.redis.zadd(this.keys.readyClaims(pool), "NX", ...args);
  }

  async size(queue: string): Promise<number> {
    const { pool } = readyQueueParts(queue);
    const [a, b] = await Promise.all([this.conn.redis.zcard(this.keys.ready(pool)), this.conn.redis.zcard(this.keys.readyLater(pool))]);
    return a + b;
  }

  async markLimited(ownerId: string, limited: boolean): Promise<void> {
    if (limited) await this.conn.redis.sadd(this.keys.limitedOwners, ownerId);
    else await this.conn.redis.srem(this.keys.limitedOwners, ownerId);
  }

  async replaceLimited(ownerIds: readonly string[]): Promise<void> {
    const multi = this.conn.redis.multi().del(this.keys.limitedOwners);
    if (ownerIds.length > 0) multi.sadd(this.keys.limitedOwners, ...ownerIds);
    await multi.exec();
  }

  async limitedAmong(ownerIds: readonly string[]): Promise<Set<string>> {
    if (ownerIds.length === 0) return new Set();
    const flags = await this.conn.redis.smismember(this.keys.limitedOwners, ...ownerIds);
    return new Set(ownerIds.filter((_, i) => flags[i] === 1));
  }

  async anyLimited(): Promise<boolean> {
    // An empty set does not exist in Redis.
    return (await this.conn.redis.exists(this.keys.limitedOwners)) === 1;
  }

  close(): Promise<void> {
    return this.drop();
  }
}
