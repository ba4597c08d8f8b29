import { Channels, readyScore, type ClaimMarker, type EventBus, type Millis, type ReadyEntry, type ReadyQueue, type TakenEntry } from "../ports.js";
import { checkCount, checkTime } from "../checks.js";
import { IndexedHeap } from "./indexed-heap.js";

interface Pool {
  /** Ready now: runId → readyScore. */
  ready: IndexedHeap;
  /** Staged: runId → notBefore. */
  later: IndexedHeap;
  /** runId → the entry's ready score and payload, while queued or staged. */
  data: Map<string, { score: number; payload: string | null }>;
  /** Taken with a payload: runId → claim marker expiry. */
  claims: Map<string, Millis>;
}

/**
 * Ready queues for `kairos dev`: per pool a heap ordered by {@link readyScore} then runId (the
 * same total order as the Redis sorted set), a heap of staged entries by `notBefore`, and the
 * claim markers. Empty pools are dropped so pool names do not leak.
 */
export class MemoryReadyQueue implements ReadyQueue {
  private readonly pools = new Map<string, Pool>();
  private readonly limited = new Set<string>();
  private since: Millis | null = null;

  constructor(private readonly bus: EventBus) {}

  private pool(name: string): Pool {
    let p = this.pools.get(name);
    if (!p) this.pools.set(name, (p = { ready: new IndexedHeap(), later: new IndexedHeap(), data: new Map(), claims: new Map() }));
    return p;
  }

  private gc(name: string, p: Pool): void {
    if (p.ready.size === 0 && p.later.size === 0 && p.claims.size === 0) this.pools.delete(name);
  }

  async push(pool: string, entries: readonly ReadyEntry[]): Promise<void> {
    const scored = entries.map((e) => ({ e, score: readyScore(e) })); // validate all first
    const p = this.pool(pool);
    let added = 0;
    let earliest = Infinity;
    for (const { e, score } of scored) {
      if (p.ready.has(e.runId) || p.later.has(e.runId)) continue; // a re-push keeps the first position
      p.data.set(e.runId, { score, payload: e.payload ?? null });
      if (e.notBefore !== undefined) {
        p.later.set(e.runId, e.notBefore);
        earliest = Math.min(earliest, e.notBefore);
      } else {
        p.ready.set(e.runId, score);
      }
      added++;
    }
    this.gc(pool, p);
    if (added > 0) await this.bus.publish(Channels.readyWake(pool), JSON.stringify({ pool, count: added, ...(earliest < Infinity ? { at: earliest } : {}) }));
  }

  async take(pool: string, max: number, now: Millis, claimMs: number): Promise<{ taken: TakenEntry[]; nextAt: Millis | null }> {
    checkCount("max", max);
    checkTime("now", now);
    checkCount("claimMs", claimMs);
    const p = this.pools.get(pool);
    if (!p) return { taken: [], nextAt: null };
    // Markers stay for claimMs after they expire (see claimExpiry).
    for (const [id, until] of p.claims) if (until <= now - claimMs) p.claims.delete(id);
    for (let head = p.later.peek(); head && head.score <= now; head = p.later.peek()) {
      p.later.pop();
      p.ready.set(head.key, p.data.get(head.key)!.score);
    }
    const taken: TakenEntry[] = [];
    while (taken.length < max && p.ready.size > 0) {
      const runId = p.ready.pop()!.key;
      const payload = p.data.get(runId)?.payload ?? null;
      p.data.delete(runId);
      if (payload !== null) p.claims.set(runId, now + claimMs);
      taken.push({ runId, payload });
    }
    const nextAt = p.later.peek()?.score ?? null;
    this.gc(pool, p);
    return { taken, nextAt };
  }

  async remove(pool: string, runId: string): Promise<boolean> {
    const p = this.pools.get(pool);
    if (!p) return false;
    const removed = p.ready.delete(runId) || p.later.delete(runId);
    if (removed) p.data.delete(runId);
    this.gc(pool, p);
    return removed;
  }

  async contains(pool: string, runId: string, now: Millis): Promise<boolean> {
    const p = this.pools.get(pool);
    if (!p) return false;
    return p.ready.has(runId) || p.later.has(runId) || (p.claims.get(runId) ?? -Infinity) > now;
  }

  async intactSince(now: Millis): Promise<Millis> {
    checkTime("now", now);
    this.since ??= now;
    return this.since;
  }

  async claimExpiry(pool: string, runId: string): Promise<Millis | null> {
    return this.pools.get(pool)?.claims.get(runId) ?? null;
  }

  async claimMarkers(pool: string, until: Millis, limit: number): Promise<ClaimMarker[]> {
    checkCount("limit", limit);
    const p = this.pools.get(pool);
    if (!p) return [];
    const due = [...p.claims].filter(([, at]) => at <= until).sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
    return due.slice(0, limit).map(([runId, expiresAt]) => ({ runId, expiresAt }));
  }

  async dropClaims(pool: string, markers: readonly ClaimMarker[]): Promise<void> {
    const p = this.pools.get(pool);
    if (!p) return;
    for (const m of markers) if ((p.claims.get(m.runId) ?? Infinity) <= m.expiresAt) p.claims.delete(m.runId);
    this.gc(pool, p);
  }

  async restoreClaims(pool: string, markers: readonly ClaimMarker[]): Promise<void> {
    if (markers.length === 0) return;
    const p = this.pool(pool);
    for (const m of markers) {
      checkTime("expiresAt", m.expiresAt);
      if (!p.claims.has(m.runId)) p.claims.set(m.runId, m.expiresAt);
    }
  }

  async size(pool: string): Promise<number> {
    const p = this.pools.get(pool);
    return p ? p.ready.size + p.later.size : 0;
  }

  async markLimited(ownerId: string, limited: boolean): Promise<void> {
    if (limited) this.limited.add(ownerId);
    else this.limited.delete(ownerId);
  }

  async replaceLimited(ownerIds: readonly string[]): Promise<void> {
    this.limited.clear();
    for (const o of ownerIds) this.limited.add(o);
  }

  async limitedAmong(ownerIds: readonly string[]): Promise<Set<string>> {
    return new Set(ownerIds.filter((o) => this.limited.has(o)));
  }

  async anyLimited(): Promise<boolean> {
    return this.limited.size > 0;
  }

  async close(): Promise<void> {}
}
