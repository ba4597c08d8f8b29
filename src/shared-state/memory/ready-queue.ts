import { Channels, readyScore, type ClaimMarker, type EventBus, type Millis, type ReadyEntry, type ReadyQueue, type TakenEntry } from "../ports.js";
import { checkCount, checkTime, READY_INTERPRETERS, readyQueueParts, takeParts } from "../checks.js";
import { IndexedHeap } from "./indexed-heap.js";

interface Pool {
  /** The owners with runs ready now, of any interpreter: owner → turn (one per owner in the pool). */
  turns: Map<string, number>;
  /** Per interpreter ("" for plain runs): the owners with runs of it ready now, by turn (the same turn as in `turns`). */
  byInterpreter: Map<string, IndexedHeap>;
  /** Ready now, per owner and interpreter (`<owner>\0<interpreter>`): runId → readyScore. */
  ready: Map<string, IndexedHeap>;
  /** Staged: runId → notBefore. */
  later: IndexedHeap;
  /** runId → the entry's owner, interpreter, ready score and payload, while queued or staged. */
  data: Map<string, { owner: string; interpreter: string; score: number; payload: string | null }>;
  /** Taken with a payload: runId → claim marker expiry. */
  claims: Map<string, Millis>;
  /** The turn after the last run taken: an owner with nothing queued joins at it. */
  turn: number;
}

const runsKey = (owner: string, interpreter: string) => `${owner}\0${interpreter}`;

/**
 * Ready queues for `kairos dev`, in the order of the Redis adapter (see ReadyQueue): per pool (all
 * its queues, plain and script runs) the owners' turns, per interpreter a heap of the owners with
 * runs of it by turn (ties by owner), per owner and interpreter a heap of its runs by
 * {@link readyScore} then runId, a heap of staged entries by `notBefore`, and the claim markers.
 * A take looks only at the heaps of the interpreters its node has. Empty pools are dropped so pool
 * names do not leak.
 */
export class MemoryReadyQueue implements ReadyQueue {
  private readonly pools = new Map<string, Pool>();
  private readonly limited = new Set<string>();
  private since: Millis | null = null;

  constructor(private readonly bus: EventBus) {}

  private pool(name: string): Pool {
    let p = this.pools.get(name);
    if (!p) this.pools.set(name, (p = { turns: new Map(), byInterpreter: new Map(), ready: new Map(), later: new IndexedHeap(), data: new Map(), claims: new Map(), turn: 0 }));
    return p;
  }

  private gc(name: string, p: Pool): void {
    if (p.data.size === 0 && p.claims.size === 0) this.pools.delete(name);
  }

  private owners(p: Pool, interpreter: string): IndexedHeap {
    let h = p.byInterpreter.get(interpreter);
    if (!h) p.byInterpreter.set(interpreter, (h = new IndexedHeap()));
    return h;
  }

  /**
   * Puts a run in its owner's queue. An owner with no run of the interpreter queued joins its turns
   * at J = min(the turn after the last run taken, the lowest turn of the interpreter's owners + 1);
   * an owner already queued keeps its turn if it is at least J, else it is raised to J (see join
   * in redis/lua/includes/entries.ts).
   */
  private enqueue(p: Pool, runId: string, owner: string, interpreter: string, score: number): void {
    const key = runsKey(owner, interpreter);
    let q = p.ready.get(key);
    if (!q) p.ready.set(key, (q = new IndexedHeap()));
    q.set(runId, score);
    const owners = this.owners(p, interpreter);
    if (owners.has(owner)) return;
    const head = owners.peek();
    const at = head ? Math.min(p.turn, head.score + 1) : p.turn;
    const own = p.turns.get(owner);
    if (own !== undefined && own >= at) {
      owners.set(owner, own);
      return;
    }
    p.turns.set(owner, at);
    if (own !== undefined) for (const h of p.byInterpreter.values()) if (h.has(owner)) h.set(owner, at);
    owners.set(owner, at);
  }

  /** After an owner's runs were taken or removed: its turn is `turn` wherever it still has runs, and it leaves the rest. */
  private settle(p: Pool, owner: string, turn: number): void {
    let any = false;
    for (const i of READY_INTERPRETERS) {
      const key = runsKey(owner, i);
      const q = p.ready.get(key);
      const owners = p.byInterpreter.get(i);
      if (q && q.size > 0) {
        any = true;
        owners!.set(owner, turn);
      } else {
        if (q) p.ready.delete(key);
        if (owners?.delete(owner) && owners.size === 0) p.byInterpreter.delete(i);
      }
    }
    if (any) p.turns.set(owner, turn);
    else p.turns.delete(owner);
  }

  async push(queue: string, entries: readonly ReadyEntry[]): Promise<void> {
    const scored = entries.map((e) => ({ e, score: readyScore(e) })); // validate all first
    const { pool, interpreter } = readyQueueParts(queue);
    const p = this.pool(pool);
    let added = 0;
    let earliest = Infinity;
    for (const { e, score } of scored) {
      if (p.data.has(e.runId)) continue; // a re-push keeps the first position
      p.data.set(e.runId, { owner: e.ownerId, interpreter, score, payload: e.payload ?? null });
      if (e.notBefore !== undefined) {
        p.later.set(e.runId, e.notBefore);
        earliest = Math.min(earliest, e.notBefore);
      } else {
        this.enqueue(p, e.runId, e.ownerId, interpreter, score);
      }
      added++;
    }
    this.gc(pool, p);
    if (added > 0) await this.bus.publish(Channels.readyWake(queue), JSON.stringify({ pool: queue, count: added, ...(earliest < Infinity ? { at: earliest } : {}) }));
  }

  async take(pool: string, max: number, now: Millis, claimMs: number, interpreters?: readonly string[]): Promise<{ taken: TakenEntry[]; nextAt: Millis | null }> {
    checkCount("max", max);
    checkTime("now", now);
    checkCount("claimMs", claimMs);
    const has = takeParts(pool, interpreters);
    const p = this.pools.get(pool);
    if (!p) return { taken: [], nextAt: null };
    // Markers stay for claimMs after they expire (see claimExpiry).
    for (const [id, until] of p.claims) if (until <= now - claimMs) p.claims.delete(id);
    for (let head = p.later.peek(); head && head.score <= now; head = p.later.peek()) {
      p.later.pop();
      const d = p.data.get(head.key)!;
      this.enqueue(p, head.key, d.owner, d.interpreter, d.score);
    }
    const taken: TakenEntry[] = [];
    while (taken.length < max) {
      // Of the owners with a run this node can start, the one whose turn is lowest (ties by owner) gives its best such run.
      let owner: { key: string; score: number } | undefined;
      for (const i of has) {
        const head = p.byInterpreter.get(i)?.peek();
        if (head && (!owner || head.score < owner.score || (head.score === owner.score && head.key < owner.key))) owner = head;
      }
      if (!owner) break;
      let best: { q: IndexedHeap; runId: string; score: number } | undefined;
      for (const i of has) {
        const q = p.ready.get(runsKey(owner.key, i));
        const head = q?.peek();
        if (head && (!best || head.score < best.score || (head.score === best.score && head.key < best.runId))) best = { q: q!, runId: head.key, score: head.score };
      }
      best!.q.pop();
      const runId = best!.runId;
      const payload = p.data.get(runId)!.payload;
      p.data.delete(runId);
      if (payload !== null) p.claims.set(runId, now + claimMs);
      taken.push({ runId, payload });
      // After, not at, the last run's turn: see takeReady-10.ts (an owner trickling runs starved a backlog).
      // (Never back: a lagging owner served here is no reason for newcomers to join before the others.)
      p.turn = Math.max(p.turn, owner.score + 1);
      this.settle(p, owner.key, owner.score + 1);
    }
    const nextAt = p.later.peek()?.score ?? null;
    this.gc(pool, p);
    return { taken, nextAt };
  }

  async remove(queue: string, runId: string): Promise<boolean> {
    const { pool } = readyQueueParts(queue);
    const p = this.pools.get(pool);
    const d = p?.data.get(runId);
    if (!p || !d) return false;
    p.data.delete(runId);
    if (!p.later.delete(runId)) {
      p.ready.get(runsKey(d.owner, d.interpreter))!.delete(runId);
      this.settle(p, d.owner, p.turns.get(d.owner)!);
    }
    this.gc(pool, p);
    return true;
  }

  async contains(queue: string, runId: string, now: Millis): Promise<boolean> {
    const p = this.pools.get(readyQueueParts(queue).pool);
    if (!p) return false;
    return p.data.has(runId) || (p.claims.get(runId) ?? -Infinity) > now;
  }

  async intactSince(now: Millis): Promise<Millis> {
    checkTime("now", now);
    this.since ??= now;
    return this.since;
  }

  async claimExpiry(queue: string, runId: string): Promise<Millis | null> {
    return this.pools.get(readyQueueParts(queue).pool)?.claims.get(runId) ?? null;
  }

  async claimMarkers(queue: string, until: Millis, limit: number): Promise<ClaimMarker[]> {
    checkCount("limit", limit);
    const p = this.pools.get(readyQueueParts(queue).pool);
    if (!p) return [];
    const due = [...p.claims].filter(([, at]) => at <= until).sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
    return due.slice(0, limit).map(([runId, expiresAt]) => ({ runId, expiresAt }));
  }

  async dropClaims(queue: string, markers: readonly ClaimMarker[]): Promise<void> {
    const { pool } = readyQueueParts(queue);
    const p = this.pools.get(pool);
    if (!p) return;
    for (const m of markers) if ((p.claims.get(m.runId) ?? Infinity) <= m.expiresAt) p.claims.delete(m.runId);
    this.gc(pool, p);
  }

  async restoreClaims(queue: string, markers: readonly ClaimMarker[]): Promise<void> {
    if (markers.length === 0) return;
    const p = this.pool(readyQueueParts(queue).pool);
    for (const m of markers) {
      checkTime("expiresAt", m.expiresAt);
      if (!p.claims.has(m.runId)) p.claims.set(m.runId, m.expiresAt);
    }
  }

  async size(pool: string): Promise<number> {
    return this.pools.get(readyQueueParts(pool).pool)?.data.size ?? 0;
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
