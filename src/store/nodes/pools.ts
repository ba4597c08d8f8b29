/** The `nodes` collection as pool coverage: which pools the ONLINE executors pull from. */
import type { NodeDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/** The pools of every ONLINE executor node (one entry per node). */
export function findOnlineNodePools(mongo: Mongo): Promise<Array<Pick<NodeDoc, "_id" | "pools" | "interpreters">>> {
  return mongo.c.nodes.find({ status: "ONLINE" }, { projection: { pools: 1, interpreters: 1 } }).toArray();
}
