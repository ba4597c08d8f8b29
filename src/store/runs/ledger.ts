/** The fire ledger's reads of runs. */
import type { RunDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/** The fireKeys of the runs among `runIds` (a withdrawn run's key carries the withdrawn mark). */
export function findFireKeys(mongo: Mongo, runIds: readonly string[]): Promise<Array<Pick<RunDoc, "_id" | "fireKey">>> {
  return mongo.c.runs.find({ _id: { $in: [...runIds] } }, { projection: { _id: 1, fireKey: 1 } }).toArray();
}
