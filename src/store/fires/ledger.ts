/** The fire ledger's documents: insert-once per key, and the one replacement a withdrawn run allows. */
import type { FireDoc } from "../../domain/index.js";
import { InsertBatcher } from "../batch.js";
import type { Mongo } from "../mongo.js";

/** Ledger inserts of one event-loop turn, as one insertMany (a duplicate refuses only its own document). */
export function createFireInsertBatch(mongo: Mongo): InsertBatcher<FireDoc> {
  return new InsertBatcher(mongo.c.fires);
}

/** Inserts the entries; returns the indexes of those refused (their key has an outcome already). */
export function insertFires(batch: InsertBatcher<FireDoc>, docs: FireDoc[]): Promise<Set<number>> {
  return batch.insertMany(docs);
}

/** The FIRED entries among `ids` that name a run. */
export function findFiredWithRun(mongo: Mongo, ids: readonly string[]): Promise<FireDoc[]> {
  return mongo.c.fires.find({ _id: { $in: [...ids] }, outcome: "FIRED", runId: { $ne: null } }).toArray();
}

/** Writes `doc` over the entry of its key if that entry still names `runId`; true when it did. */
export async function replaceFire(mongo: Mongo, doc: FireDoc, runId: string): Promise<boolean> {
  const res = await mongo.c.fires.replaceOne({ _id: doc._id, runId }, doc);
  return res.modifiedCount === 1;
}
