/** Reads of the executor nodes' documents, for the API and for the defaults of a pool's runs. */
import type { NodeDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/** Every node (at most 1,000), by name, the latest start first. */
export function listNodes(mongo: Mongo): Promise<NodeDoc[]> {
  return mongo.c.nodes.find({}).sort({ name: 1, startedAt: -1 }).limit(1_000).toArray();
}

export function findNode(mongo: Mongo, nodeId: string): Promise<NodeDoc | null> {
  return mongo.c.nodes.findOne({ _id: nodeId });
}

/** The ONLINE nodes serving `pool` (at most 1,000): what its runs may ask for and get by default. */
export function findOnlinePoolNodes(mongo: Mongo, pool: string): Promise<Array<Pick<NodeDoc, "name" | "maxRun" | "defaultRun" | "isolation">>> {
  return mongo.c.nodes
    .find({ pools: pool, status: "ONLINE" }, { projection: { name: 1, maxRun: 1, defaultRun: 1, isolation: 1 }, limit: 1_000 })
    .toArray();
}
