/**
 * Stored DAG definitions as the retention sweep sees them (src/dag/engine/retention.ts): listed in
 * id order, judged in use or not, marked retired, deleted. (Storing and reading them: runs.ts.)
 */
import type { DagDefinitionDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

export type DagDefinitionHead = Pick<DagDefinitionDoc, "_id" | "dagId" | "version" | "retiredAt">;

/** Up to `limit` stored definitions after id `after` (null: from the first), in id order, without their content. */
export async function listDagDefinitionsAfter(mongo: Mongo, after: string | null, limit: number): Promise<DagDefinitionHead[]> {
  return mongo.c.dagDefinitions
    .find(after === null ? {} : { _id: { $gt: after } }, { projection: { _id: 1, dagId: 1, version: 1, retiredAt: 1 } })
    .sort({ _id: 1 })
    .limit(limit)
    .toArray();
}

/**
 * Whether a DAG run may still read the definition: some DAG run of its version exists, or it is its
 * DAG's current version (the next trigger's, which takes it as stored once stored).
 */
export async function dagDefinitionInUse(mongo: Mongo, d: Pick<DagDefinitionDoc, "dagId" | "version">): Promise<boolean> {
  const [dag, run] = await Promise.all([
    mongo.c.dags.findOne({ _id: d.dagId }, { projection: { version: 1 } }),
    mongo.c.dagRuns.findOne({ dagId: d.dagId, dagVersion: d.version }, { projection: { _id: 1 } }),
  ]);
  return run !== null || dag?.version === d.version;
}

/** Marks the definition found unused at `at` (unless it is marked already). */
export async function retireDagDefinition(mongo: Mongo, id: string, at: Date): Promise<void> {
  await mongo.c.dagDefinitions.updateOne({ _id: id, retiredAt: { $exists: false } }, { $set: { retiredAt: at } });
}

/** A definition marked unused is in use again (a DAG run of it appeared within the grace): not retired any more. */
export async function unretireDagDefinition(mongo: Mongo, id: string): Promise<void> {
  await mongo.c.dagDefinitions.updateOne({ _id: id }, { $unset: { retiredAt: "" } });
}

/** Deletes the definition if it is still marked retired at `retiredAt` (a pass that found it in use meanwhile wins). */
export async function deleteRetiredDagDefinition(mongo: Mongo, id: string, retiredAt: Date): Promise<boolean> {
  return (await mongo.c.dagDefinitions.deleteOne({ _id: id, retiredAt })).deletedCount === 1;
}
