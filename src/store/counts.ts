/** Counts for the Prometheus gauges read at scrape time (app/metrics.ts). */
import type { NodeStatus, RunStatus } from "../domain/index.js";
import type { Mongo } from "./mongo.js";

/** The pools that ONLINE or DRAINING nodes pull from. */
export function servedPools(mongo: Mongo): Promise<string[]> {
  return mongo.c.nodes.distinct("pools", { status: { $in: ["ONLINE", "DRAINING"] } });
}

export function countNodes(mongo: Mongo, status: NodeStatus): Promise<number> {
  return mongo.c.nodes.countDocuments({ status });
}

export function countRuns(mongo: Mongo, status: RunStatus): Promise<number> {
  return mongo.c.runs.countDocuments({ status });
}
