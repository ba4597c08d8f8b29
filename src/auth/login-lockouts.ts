/**
 * The record of current login waits (rate-limit.ts's LoginGuard), and its pages for the admin
 * query `loginLockouts`. rate-limiter-flexible cannot list its keys, so each dimension (user names,
 * client addresses) records the waits it imposes: a Redis sorted set (member: the key; score: when
 * the wait ends, ms) every API instance shares, or a Map without Redis. Expired entries are dropped
 * on read.
 *
 * The list's order is latest-ending first, then user names before addresses, then by key; a
 * cursor names an entry (`[untilMs, dimension, key]`), not a position. A wait once imposed does
 * not change while it lasts (an attempt made while waiting is refused without counting), so an
 * entry keeps its place until it ends or is lifted: one added or removed while an administrator
 * pages moves no other, and the walk never reads one twice or skips one that was there all along.
 */
import { ValidationError } from "../domain/index.js";
import type { RedisClient } from "../shared-state/index.js";
import type { Page } from "../store/index.js";

export type LockoutDimension = "user" | "address";

/** A user name or client address that must wait before its next login attempt. */
export interface LoginLockout {
  dimension: LockoutDimension;
  key: string;
  /** When the wait (or lockout) ends. */
  until: Date;
  /** Failed logins counted in the window, when known. */
  failures: number | null;
}

/** One recorded wait: its key and when it ends (ms). */
export interface Wait {
  key: string;
  until: number;
}

/** Where a page of the list goes on from: after this entry. */
export interface LockoutPosition {
  until: number;
  dimension: LockoutDimension;
  key: string;
}

const RANK: Record<LockoutDimension, number> = { user: 0, address: 1 };

/** The list's order: latest-ending first, user names before addresses, then by key. */
export function compareLockouts(a: LockoutPosition, b: LockoutPosition): number {
  return b.until - a.until || RANK[a.dimension] - RANK[b.dimension] || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

export function lockoutCursor(p: LockoutPosition): string {
  return Buffer.from(JSON.stringify([p.until, p.dimension, p.key])).toString("base64url");
}

/** The entry a cursor of this list names; null: from the start. */
export function lockoutAfter(cursor: string | null | undefined): LockoutPosition | null {
  if (!cursor) return null;
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(v) && v.length === 3) {
      const [until, dimension, key] = v as [unknown, unknown, unknown];
      if (typeof until === "number" && Number.isFinite(until) && (dimension === "user" || dimension === "address") && typeof key === "string") return { until, dimension, key };
    }
  } catch {
    // fall through
  }
  throw new ValidationError("after", "not a cursor returned by this list (use its pageInfo.endCursor)");
}

/**
 * The page of `entries` (each dimension's first `size + 1` after the cursor, merged) in the list's
 * order: `size` of them, and whether more follow.
 */
export function lockoutPage<T extends LockoutPosition>(entries: T[], size: number): Page<T> {
  const sorted = [...entries].sort(compareLockouts);
  const edges = sorted.slice(0, size).map((node) => ({ cursor: lockoutCursor(node), node }));
  return { edges, pageInfo: { hasNextPage: sorted.length > size, endCursor: edges.at(-1)?.cursor ?? null } };
}

/** The record of current waits along one dimension: a Redis sorted set, or a Map in this process. */
export class BlockedList {
  private readonly memory = new Map<string, number>();

  constructor(
    private readonly redis: RedisClient | null,
    private readonly dimension: LockoutDimension,
    private readonly redisKey: string,
    /** The longest wait: the sorted set expires this long after its last addition. */
    private readonly maxMs: number,
  ) {}

  async add(key: string, until: number): Promise<void> {
    if (!this.redis) {
      this.memory.set(key, until);
      return;
    }
    await this.redis.multi().zadd(this.redisKey, until, key).pexpire(this.redisKey, this.maxMs + 60_000).exec();
  }

  async remove(key: string): Promise<void> {
    if (!this.redis) this.memory.delete(key);
    else await this.redis.zrem(this.redisKey, key);
  }

  /** The first `page.size` current waits after the cursor's entry, in the list's order. */
  async list(page: { size: number; after: LockoutPosition | null }): Promise<Wait[]> {
    const now = Date.now();
    const follows = (w: Wait) => !page.after || compareLockouts(page.after, { ...w, dimension: this.dimension }) < 0;
    const inOrder = (ws: Wait[]) => ws.filter(follows).sort((a, b) => compareLockouts({ ...a, dimension: this.dimension }, { ...b, dimension: this.dimension })).slice(0, page.size);
    if (!this.redis) {
      for (const [k, until] of this.memory) if (until <= now) this.memory.delete(k);
      return inOrder([...this.memory].map(([key, until]) => ({ key, until })));
    }
    const redis = this.redis;
    await redis.zremrangebyscore(this.redisKey, "-inf", now);
    const read = async (max: string, min: string, limit?: number): Promise<Wait[]> => {
      const flat = limit === undefined ? await redis.zrevrangebyscore(this.redisKey, max, min, "WITHSCORES") : await redis.zrevrangebyscore(this.redisKey, max, min, "WITHSCORES", "LIMIT", 0, limit);
      const out: Wait[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) out.push({ key: flat[i]!, until: Number(flat[i + 1]) });
      return out;
    };
    // The cursor's own instant: the waits ending then that come after it (few: the same millisecond).
    const ties = page.after ? await read(String(page.after.until), String(page.after.until)) : [];
    const later = await read(page.after ? `(${page.after.until}` : "+inf", `(${now}`, page.size);
    // Redis orders waits ending at the same millisecond by key, backwards: the last instant read is read whole.
    const last = later.length === page.size ? later.at(-1)!.until : null;
    const lastWhole = last === null ? [] : await read(String(last), String(last));
    return inOrder([...ties, ...later.filter((w) => w.until !== last), ...lastWhole]);
  }
}
