/** DAGs: created, read, changed at a version, deleted. */
import type { Filter } from "mongodb";
import type { DagDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";
import { afterDesc, toPage, type Page, type PageQuery } from "../pages.js";

export async function insertDag(mongo: Mongo, dag: DagDoc): Promise<void> {
  await mongo.c.dags.insertOne(dag);
}

export function findDag(mongo: Mongo, dagId: string): Promise<DagDoc | null> {
  return mongo.c.dags.findOne({ _id: dagId });
}

/** The DAG without its tasks (up to 1,000 task specs, which its version's stored definition also holds). */
export function findDagHead(mongo: Mongo, dagId: string): Promise<Omit<DagDoc, "tasks"> | null> {
  return mongo.c.dags.findOne({ _id: dagId }, { projection: { tasks: 0 } });
}

/** The DAG's owner only (whether a caller may name it, e.g. in a search of runs). */
export function findDagOwner(mongo: Mongo, dagId: string): Promise<Pick<DagDoc, "_id" | "ownerId"> | null> {
  return mongo.c.dags.findOne({ _id: dagId }, { projection: { ownerId: 1 } });
}

/** Whether the DAG exists (its id only: a DAG's document holds up to 1,000 task specs). */
export async function dagExists(mongo: Mongo, dagId: string): Promise<boolean> {
  return (await mongo.c.dags.findOne({ _id: dagId }, { projection: { _id: 1 } })) !== null;
}

/** The DAG `dagId` if `ownerId` owns it (a create that found its id taken: its own earlier attempt?). */
export function findOwnedDag(mongo: Mongo, dagId: string, ownerId: string): Promise<DagDoc | null> {
  return mongo.c.dags.findOne({ _id: dagId, ownerId });
}

/** Applies `set` if the DAG is still at `current.version` (bumping it); the DAG after, or null when it changed meanwhile. */
export function updateDagAtVersion(mongo: Mongo, current: Pick<DagDoc, "_id" | "version">, set: Partial<DagDoc>): Promise<DagDoc | null> {
  return mongo.c.dags.findOneAndUpdate({ _id: current._id, version: current.version }, { $set: set, $inc: { version: 1 } }, { returnDocument: "after" });
}

/** Sets fields that do not make a new version of the definition (paused). The DAG after, or null when it is gone. */
export function setDagFields(mongo: Mongo, dagId: string, set: Partial<DagDoc>): Promise<DagDoc | null> {
  return mongo.c.dags.findOneAndUpdate({ _id: dagId }, { $set: set }, { returnDocument: "after" });
}

export async function deleteDagDoc(mongo: Mongo, dagId: string): Promise<boolean> {
  return (await mongo.c.dags.deleteOne({ _id: dagId })).deletedCount === 1;
}

/** Ids of the owner's DAGs (a deleted user's, to delete them). */
export async function findDagIdsOfOwner(mongo: Mongo, ownerId: string): Promise<string[]> {
  return (await mongo.c.dags.find({ ownerId }, { projection: { _id: 1 } }).toArray()).map((d) => d._id);
}

/** Deletes every DAG of the owner (a deleted user's); how many. */
export async function deleteDagsOfOwner(mongo: Mongo, ownerId: string): Promise<number> {
  return (await mongo.c.dags.deleteMany({ ownerId })).deletedCount;
}

/**
 * A page of DAGs (of `ownerId`; null: everyone's), newest first, without their tasks (up to 1,000
 * task specs, ~2 MiB a DAG: read whole, 20 aliases of `dags(first: 100) { edges { node { id } } }`
 * read 4 GB); the API reads a DAG's tasks where a request asks for them.
 */
export async function listDags(mongo: Mongo, ownerId: string | null, page: PageQuery): Promise<Page<Omit<DagDoc, "tasks">>> {
  const q: Filter<DagDoc> = ownerId === null ? {} : { ownerId };
  const docs = await mongo.c.dags
    .find({ ...q, ...afterDesc("createdAt", page.after) } as Filter<DagDoc>, { projection: { tasks: 0 } })
    .sort({ createdAt: -1, _id: -1 })
    .limit(page.size + 1)
    .toArray();
  return toPage(docs, page.size, (d) => d.createdAt);
}
