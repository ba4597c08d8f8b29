import { Channels, readyScore, type EventBus, type ReadyEntry, type ReadyQueue } from "../ports.js";
import { checkCount } from "./checks.js";
import { IndexedHeap } from "./indexed-heap.js";

/**
 * Ready queues for `kairos dev`: one heap per pool ordered by {@link readyScore} then runId, the
 * same total order as the Redis sorted set. Empty pools are dropped so pool names do not leak.
 */
export class MemoryReadyQueue implements ReadyQueue {
  private readonly pools = new Map<string, IndexedHeap>();

  constructor(private readonly bus: EventBus) {}

  async push(pool: string, entries: readonly ReadyEntry[]): Promise<void> {
    const scored = entries.map((e) => ({ runId: e.runId, score: readyScore(e) })); // validate all first
    let heap = this.pools.get(pool);
    if (!heap) this.pools.set(pool, (heap = new IndexedHeap()));
    let added = 0;
    for (const { runId, score } of scored) {
      if (heap.has(runId)) continue; // a re-push keeps the first position
      heap.set(runId, score);
      added++;
    }
    if (heap.size === 0) this.pools.delete(pool);
    if (added > 0) await this.bus.publish(Channels.readyWake(pool), JSON.stringify({ pool, count: added }));
  }

  async pop(pool: string, max: number): Promise<string[]> {
    checkCount("max", max);
    const heap = this.pools.get(pool);
    const out: string[] = [];
    if (!heap) return out;
    while (out.length < max && heap.size > 0) out.push(heap.pop()!.key);
    if (heap.size === 0) this.pools.delete(pool);
    return out;
  }

  async remove(pool: string, runId: string): Promise<boolean> {
    const heap = this.pools.get(pool);
    if (!heap || !heap.delete(runId)) return false;
    if (heap.size === 0) this.pools.delete(pool);
    return true;
  }

  async contains(pool: string, runId: string): Promise<boolean> {
    return this.pools.get(pool)?.has(runId) ?? false;
  }

  async size(pool: string): Promise<number> {
    return this.pools.get(pool)?.size ?? 0;
  }

  async close(): Promise<void> {}
}
