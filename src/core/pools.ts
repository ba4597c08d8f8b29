/**
 * Which pools some executor serves. A run in a pool that no ONLINE executor pulls from waits
 * QUEUED until one does; the API says so on the job (`warnings`, `health`) and `/metrics` counts
 * such runs (kairos_unserved_queued_runs). Node facts are read at most once per `cacheMs`.
 */
import type { Clock } from "../shared-state/index.js";
import type { Mongo } from "../store/index.js";
import { findOnlineNodePools } from "../store/index.js";
import { countQueuedInPool, findQueuedPools } from "../store/index.js";
import { poolOfQueue, readyQueueOf, readyQueuesFor } from "../domain/index.js";
import type { JobDoc } from "../domain/index.js";

export class PoolCoverage {
  private cached: { at: number; served: Promise<Map<string, number>> } | null = null;

  constructor(private readonly deps: { mongo: Mongo; clock: Clock; cacheMs?: number }) {}

  /** Ready queue (a pool, or a pool's script queue `<pool>:<interpreter>`) → number of ONLINE executor nodes pulling from it. */
  served(): Promise<Map<string, number>> {
    const now = this.deps.clock();
    if (this.cached && now - this.cached.at < (this.deps.cacheMs ?? 2_000)) return this.cached.served;
    const served = findOnlineNodePools(this.deps.mongo).then((nodes) => {
      const m = new Map<string, number>();
      for (const n of nodes) {
        for (const q of readyQueuesFor(n.pools, (n.interpreters ?? []).map((i) => i.name))) m.set(q, (m.get(q) ?? 0) + 1);
      }
      return m;
    });
    served.catch(() => (this.cached = null));
    this.cached = { at: now, served };
    return served;
  }

  /** What a user should know about where the job's runs will run, in words; empty when all is well. */
  async warnings(job: { spec: Pick<JobDoc["spec"], "pool"> & { kind?: string; interpreter?: string | null; script?: { interpreter: string } | null } }): Promise<string[]> {
    const interpreter = job.spec.script?.interpreter ?? job.spec.interpreter ?? null;
    const queue = readyQueueOf({ pool: job.spec.pool, kind: job.spec.kind ?? "COMMAND", script: interpreter ? { interpreter } : null });
    const unserved = await this.unserved(queue);
    return unserved ? [unserved] : [];
  }

  /**
   * Why no online executor takes runs from the ready queue `queue` (a pool, or `<pool>:<interpreter>`),
   * in words; null when one does.
   */
  async unserved(queue: string): Promise<string | null> {
    const served = await this.served();
    if ((served.get(queue) ?? 0) > 0) return null;
    const pool = poolOfQueue(queue);
    const known = [...served.keys()].filter((q) => !q.includes(":")).sort();
    if (queue !== pool && (served.get(pool) ?? 0) > 0) {
      const interpreter = queue.slice(pool.length + 1);
      const here = [...served.keys()].filter((q) => q.startsWith(`${pool}:`)).map((q) => q.slice(pool.length + 1)).sort();
      return (
        `no online executor of pool "${pool}" has the ${interpreter} interpreter: its runs wait QUEUED until one does ` +
        `(interpreters in the pool now: ${here.length ? here.join(", ") : "none"})`
      );
    }
    return (
      `no online executor serves pool "${pool}": its runs wait QUEUED until one does ` +
      `(pools served now: ${known.length ? known.join(", ") : "none"}; executors choose theirs with KAIROS_POOLS)`
    );
  }

  /** QUEUED runs per pool that no online executor serves (for the metrics gauge). */
  async unservedQueued(): Promise<Array<[string, number]>> {
    const served = await this.served();
    const pools = await findQueuedPools(this.deps.mongo);
    const unserved = pools.filter((p) => !served.has(p));
    return Promise.all(unserved.map(async (p) => [p, await countQueuedInPool(this.deps.mongo, p)] as [string, number]));
  }
}
