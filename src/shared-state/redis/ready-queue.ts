import { Channels, READY_SCORE_DIGITS, readyScore, type ClaimMarker, type Millis, type ReadyEntry, type ReadyQueue, type TakenEntry } from "../ports.js";
import { checkCount, ms } from "./checks.js";
import { READY_INTERPRETERS, readyQueueParts, takeParts } from "../checks.js";
import type { SharedConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";
import { scripts } from "./lua/all.js";
import type { ScriptRunner } from "./scripts.js";

/**
 * An entry's member of the pool's queued ZSET: its owner, the interpreter it needs ("" for none),
 * then its score (fixed width) and id, so lex order is the owner's order per interpreter.
 */
function readyMember(e: ReadyEntry, interpreter: string, score: number): string {
  return `${e.ownerId}\0${interpreter}\0${String(score).padStart(READY_SCORE_DIGITS, "0")}${e.runId}`;
}

/**
 * An entry as the version with turns per queue stored it (value `<owner>\0<readyScore, 14 digits><runId><payload>`),
 * with its `notBefore` if it was staged; null for a value of another shape.
 */
function legacyEntry(runId: string, value: string, notBefore: string | null): ReadyEntry | null {
  const nul = value.indexOf("\0");
  if (nul <= 0) return null;
  const digits = value.slice(nul + 1, nul + 1 + READY_SCORE_DIGITS);
  if (!/^\d+$/.test(digits) || digits.length !== READY_SCORE_DIGITS || value.slice(nul + 1 + READY_SCORE_DIGITS, nul + 1 + READY_SCORE_DIGITS + runId.length) !== runId) return null;
  const score = Number(digits);
  const payload = value.slice(nul + 1 + READY_SCORE_DIGITS + runId.length);
  const entry: ReadyEntry = { runId, ownerId: value.slice(0, nul), priority: 9 - Math.floor(score / 1e13), enqueuedAt: score % 1e13, payload: payload || null };
  if (notBefore !== null) entry.notBefore = Number(notBefore);
  return entry;
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
  /** Pools whose old keys this process adopted (or is adopting): see adoptLegacy. */
  private readonly adopted = new Map<string, Promise<void>>();

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
    const turns = this.turnKeys(pool);
    await this.run.run(
      scripts.pushReady,
      [k.ready(pool), k.readyOwners(pool), k.readyLater(pool), k.readyData(pool), ...turns.keys],
      [k.channel(Channels.readyWake(queue)), queue, interpreter, ...turns.names, ...args],
    );
  }

  async take(pool: string, max: number, now: Millis, claimMs: number, interpreters?: readonly string[]): Promise<{ taken: TakenEntry[]; nextAt: Millis | null }> {
    checkCount("max", max);
    checkCount("claimMs", claimMs);
    const has = takeParts(pool, interpreters);
    await this.adoptLegacy(pool);
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

  /**
   * Once per pool and process, before its first take: moves what an older version left in the
   * pool's queues' old keys (turns per queue: the pool's own and one per interpreter, entries
   * without the interpreter) into the pool's structures, as pushes to the same queues (idempotent
   * per runId), and their claim markers with it (a marker already there stays). Each entry is moved
   * by the process whose HDEL removed it from the old key, so two processes adopting at once do not
   * both push it (which could queue a run again after another executor took it). A crash in
   * between loses it from the queue: the reaper pushes it again, as it does for any run missing
   * from its queue. Old executors still taking from the old keys meanwhile (a rolling upgrade)
   * only race as two takers of a run do: one claim wins in MongoDB (docs/redis-layout.md, "Upgrading").
   */
  private adoptLegacy(pool: string): Promise<void> {
    let done = this.adopted.get(pool);
    if (!done) {
      done = Promise.all(READY_INTERPRETERS.map((i) => this.adoptQueue(i === "" ? pool : `${pool}:${i}`))).then(() => undefined);
      // A failure is retried by the next take (and the run is the reaper's meanwhile).
      done.catch(() => this.adopted.delete(pool));
      this.adopted.set(pool, done);
    }
    return done;
  }

  private async adoptQueue(queue: string): Promise<void> {
    const redis = this.conn.redis;
    const old = this.keys.legacyReady(queue);
    const [entries, claims] = await Promise.all([redis.exists(old.entries), readyQueueParts(queue).interpreter === "" ? 0 : redis.exists(old.claims)]);
    if (entries === 0 && claims === 0) return;
    let cursor = "0";
    do {
      const [next, flat] = await redis.hscan(old.entries, cursor, "COUNT", 1_000);
      cursor = next;
      const found: Array<{ runId: string; value: string }> = [];
      for (let i = 0; i < flat.length; i += 2) if (flat[i] !== "|turn") found.push({ runId: flat[i]!, value: flat[i + 1]! });
      if (found.length === 0) continue;
      const notBefore = await redis.zmscore(old.later, ...found.map((f) => f.runId));
      const mine = (await found.reduce((m, f) => m.hdel(old.entries, f.runId), redis.multi()).exec()) ?? [];
      const adopted: ReadyEntry[] = [];
      found.forEach((f, j) => {
        const entry = legacyEntry(f.runId, f.value, notBefore[j] ?? null);
        if (entry && mine[j]?.[1] === 1) adopted.push(entry);
      });
      if (adopted.length > 0) await this.push(queue, adopted);
    } while (cursor !== "0");
    if (readyQueueParts(queue).interpreter !== "") {
      const flat = await redis.zrange(old.claims, 0, -1, "WITHSCORES");
      const markers: ClaimMarker[] = [];
      for (let i = 0; i < flat.length; i += 2) markers.push({ runId: flat[i]!, expiresAt: Number(flat[i + 1]) });
      await this.restoreClaims(queue, markers);
      await redis.del(old.claims);
    }
    // Their members and owners indexed only the entries just moved; the old turn goes with them.
    await redis.hdel(old.entries, "|turn");
    await redis.del(old.runs, old.owners, old.later);
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
