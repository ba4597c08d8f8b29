import { Channels, readyScore, type ClaimMarker, type EventBus, type Millis, type ReadyEntry, type ReadyQueue, type TakenEntry } from "../ports.js";
import { checkCount, checkTime } from "../checks.js";
import { IndexedHeap } from "./indexed-heap.js";

interface Pool {
  /** The owners with runs ready now: owner → turn. */
  owners: IndexedHeap;
  /** Ready now, per owner: runId → readyScore. */
  ready: Map<string, IndexedHeap>;
  /** Staged: runId → notBefore. */
  later: IndexedHeap;
  /** runId → the entry's owner, ready score and payload, while queued or staged. */
  data: Map<string, { owner: string; score: number; payload: string | null }>;
  /** Taken with a payload: runId → claim marker expiry. */
  claims: Map<string, Millis>;
  /** The turn after the last run taken: an owner with nothing queued joins at it. */
  turn: number;
}

/**
 * Ready queues for `kairos dev`, in the order of the Redis adapter (see ReadyQueue): per pool a heap
 * of owners by turn (ties by owner), per owner a heap of its runs by {@link readyScore} then runId,
 * a heap of staged entries by `notBefore`, and the claim markers. Empty pools are dropped so pool
 * names do not leak.
 */
export class MemoryReadyQueue implements ReadyQueue {
  private readonly pools = new Map<string, Pool>();
  private readonly limited = new Set<string>();
  private since: Millis | null = null;

  constructor(private readonly bus: EventBus) {}

  private pool(name: string): Pool {
    let p = this.pools.get(name);
    if (!p) this.pools.set(name, (p = { owners: new IndexedHeap(), ready: new Map(), later: new IndexedHeap(), data: new Map(), claims: new Map(), turn: 0 }));
    return p;
  }

  private gc(name: string, p: Pool): void {
    if (p.data.size === 0 && p.claims.size === 0) this.pools.delete(name);
  }

  /** Puts a run in its owner's queue; an owner that had none joins at the turn after the last run taken. */
  private enqueue(p: Pool, runId: string, owner: string, score: number): void {
    let q = p.ready.get(owner);
    if (!q) p.ready.set(owner, (q = new IndexedHeap()));
    q.set(runId, score);
    if (!p.owners.has(owner)) p.owners.set(owner, p.turn);
  }

  async push(pool: string, entries: readonly ReadyEntry[]): Promise<void> {
    const scored = entries.map((e) => ({ e, score: readyScore(e) })); // validate all first
    const p = this.pool(pool);
    let added = 0;
    let earliest = Infinity;
    for (const { e, score } of scored) {
      if (p.data.has(e.runId)) continue; // a re-push keeps the first position
      p.data.set(e.runId, { owner: e.ownerId, score, payload: e.payload ?? null });
      if (e.notBefore !== undefined) {
        p.later.set(e.runId, e.notBefore);
        earliest = Math.min(earliest, e.notBefore);
      } else {
        this.enqueue(p, e.runId, e.ownerId, score);
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
      const d = p.data.get(head.key)!;
      this.enqueue(p, head.key, d.owner, d.score);
    }
    const taken: TakenEntry[] = [];
    while (taken.length < max && p.owners.size > 0) {
      // The owner whose turn is lowest gives runs until its turn passes the next owner's (one at least).
      const { key: owner, score: at } = p.owners.pop()!;
      const q = p.ready.get(owner)!;
      const next = p.owners.peek();
      const room = Math.min(max - taken.length, next ? Math.max(1, next.score - at) : Infinity);
      let n = 0;
      while (n < room && q.size > 0) {
        const runId = q.pop()!.key;
        const payload = p.data.get(runId)!.payload;
        p.data.delete(runId);
        if (payload !== null) p.claims.set(runId, now + claimMs);
        taken.push({ runId, payload });
        n++;
      }
      // After, not at, the last run's turn: see takeReady-5.ts (an owner trickling runs starved a backlog).
      p.turn = at + n;
      if (q.size > 0) p.owners.set(owner, at + n);
      else p.ready.delete(owner);
    }
    const nextAt = p.later.peek()?.score ?? null;
    this.gc(pool, p);
    return { taken, nextAt };
  }

  async remove(pool: string, runId: string): Promise<boolean> {
    const p = this.pools.get(pool);
    const d = p?.data.get(runId);
    if (!p || !d) return false;
    p.data.delete(runId);
    if (!p.later.delete(runId)) {
      const q = p.ready.get(d.owner)!;
      q.delete(runId);
      if (q.size === 0) {
        p.ready.delete(d.owner);
        p.owners.delete(d.owner);
      }
    }
    this.gc(pool, p);
    return true;
  }

  async contains(pool: string, runId: string, now: Millis): Promise<boolean> {
    const p = this.pools.get(pool);
    if (!p) return false;
    return p.data.has(runId) || (p.claims.get(runId) ?? -Infinity) > now;
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
    return this.pools.get(pool)?.data.size ?? 0;
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
