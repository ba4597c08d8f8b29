/** Gauges read at scrape time from the shared state and the store. */
import { OPEN_STATUSES } from "../domain/index.js";
import type { PoolCoverage } from "../core/index.js";
import type { SharedState } from "../shared-state/index.js";
import { countNodes, countRuns, servedPools, type Mongo } from "../store/index.js";
import { registry, SampledGauge } from "../support/index.js";

type Sample = [Record<string, string>, number];

/** Registers the gauges (replacing earlier ones of the same name); returns their unregistration. */
export function registerSampledMetrics(deps: { mongo: Mongo; state: SharedState; pools: PoolCoverage }, configuredPools: readonly string[]): () => Promise<void> {
  const { mongo, state, pools } = deps;
  const gauges = [
    // Per pool: its script runs wait in the pool's structures, in the pool's turns (ReadyQueue.size).
    new SampledGauge("kairos_queue_depth", "Runs waiting in each pool's ready queue, queued or staged (plain and script runs of every interpreter).", ["pool"], async () => {
      const known = new Set<string>([...configuredPools, ...(await servedPools(mongo))]);
      return Promise.all([...known].map(async (pool): Promise<Sample> => [{ pool }, await state.ready.size(pool)]));
    }),
    new SampledGauge("kairos_nodes", "Executor nodes by status.", ["status"], async () =>
      Promise.all((["ONLINE", "DRAINING", "OFFLINE", "DEAD"] as const).map(async (status): Promise<Sample> => [{ status }, await countNodes(mongo, status)])),
    ),
    new SampledGauge("kairos_open_runs", "Runs not yet final, by status.", ["status"], async () =>
      Promise.all(OPEN_STATUSES.map(async (status): Promise<Sample> => [{ status }, await countRuns(mongo, status)])),
    ),
    new SampledGauge("kairos_unserved_queued_runs", "QUEUED runs in pools that no online executor serves (they wait until one does).", ["pool"], async () =>
      (await pools.unservedQueued()).map(([pool, n]): Sample => [{ pool }, n]),
    ),
  ];
  for (const g of gauges) {
    registry.unregister(g.name);
    registry.register(g);
  }
  return async () => {
    for (const g of gauges) registry.unregister(g.name);
  };
}
