/** The pools of each DAG's first tasks (those without parents): where one of its fires makes runs at once. */
import type { DagDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/** DAG id → one pool per first task (a pool twice when two first tasks share it). */
export async function findDagRootPools(mongo: Mongo, dagIds: readonly string[]): Promise<Map<string, string[]>> {
  if (dagIds.length === 0) return new Map();
  const docs = (await mongo.c.dags
    .find({ _id: { $in: [...dagIds] } }, { projection: { "tasks.dependsOn": 1, "tasks.spec.pool": 1 } })
    .toArray()) as Array<Pick<DagDoc, "_id"> & { tasks: Array<{ dependsOn?: string[]; spec?: { pool?: string } }> }>;
  return new Map(docs.map((d) => [d._id, d.tasks.filter((t) => (t.dependsOn ?? []).length === 0).map((t) => t.spec?.pool ?? "default")]));
}
