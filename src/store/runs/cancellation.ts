import { RunStatus } from "../../domain/index.js";
import type { RunDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/** Flags a RUNNING run for cancellation (its executor kills it); null when it is not RUNNING. */
export function flagCancelRequested(mongo: Mongo, runId: string, now: Date): Promise<RunDoc | null> {
  return mongo.c.runs.findOneAndUpdate(
    { _id: runId, status: RunStatus.RUNNING },
    { $set: { cancelRequested: true, updatedAt: now } },
    { returnDocument: "after" },
  );
}
