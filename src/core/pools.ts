/**
 * Which pools some executor serves. A run in a pool that no ONLINE executor pulls from waits
 * QUEUED until one does; the API says so on the job (`warnings`, `health`) and `/metrics` counts
 * such runs (kairos_unserved_queued_runs). Node facts are read at most once per `cacheMs`.
 */
import type { Clock } from "../shared-state/index.js";
import type { Mongo } from "../store/index.js";
import { findOnlineNodePools } from "../store/index.js";
import { countQueuedInPool, findQueuedPools } from "../store/index.js";
import type { JobDoc } from "../domain/index.js";

export class PoolCoverage {
  private cached: { at: number; served: Promise<Map<string, number>> } | null = null;

  constructor(private readonly deps: { mongo: Mongo; clock: Clock; cacheMs?: number }) {}

  /** Pool → number of ONLINE executor nodes pulling from it. */
  served(): Promise<Map<string, number>> {
    const now = this.deps.clock();
    if (this.cached && now - this.cached.at < (this.deps.cacheMs ?? 2_000)) return this.cached.served;
    const served = findOnlineNodePools(this.deps.mongo).then((nodes) => {
      const m = new Map<string, number>();
      for (const n of nodes) for (const p of n.pools) m.set(p, (m.get(p) ?? 0) + 1);
      return m;
    });
    served.catch(() => (this.cached = null));
    this.cached = { at: now, served };
    return served;
  }

  /** What a user should know about where the job's runs will run, in words; empty when all is well. */
  async warnings(job: { spec: Pick<JobDoc["spec"], "pool"> }): Promise<string[]> {
    const served = await this.served();
    if ((served.get(job.spec.pool) ?? 0) > 0) return [];
    const known = [...served.keys()].sort();
    return [
      `no online executor serves pool "${job.spec.pool}": its runs wait QUEUED until one does ` +
        `(pools served now: ${known.length ? known.join(", ") : "none"}; executors choose theirs with KAIROS_POOLS)`,
    ];
  }

  /** QUEUED runs per pool that no online executor serves (for the metrics gauge). */
  async unservedQueued(): Promise<Array<[string, number]>> {
    const served = await this.served();
    const pools = await findQueuedPools(this.deps.mongo);
    const unserved = pools.filter((p) => !served.has(p));
    return Promise.all(unserved.map(async (p) => [p, await countQueuedInPool(this.deps.mongo, p)] as [string, number]));
  }
}
