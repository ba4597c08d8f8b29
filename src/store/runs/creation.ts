/** Creating runs: one per fire key (unique index `fireKey_unique`), inserted in batches. */
import type { RunDoc } from "../../domain/index.js";
import { InsertBatcher } from "../batch.js";
import type { Mongo } from "../mongo.js";

/** The run already created for a fire, if any. */
export function findRunByFireKey(mongo: Mongo, fireKey: string): Promise<RunDoc | null> {
  return mongo.c.runs.findOne({ fireKey });
}

/** Run inserts of one event-loop turn go to MongoDB as one insertMany (a burst of fires). */
export function createRunInserter(mongo: Mongo): InsertBatcher<RunDoc> {
  return new InsertBatcher(mongo.c.runs);
}
