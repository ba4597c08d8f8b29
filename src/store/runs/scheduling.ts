/** The scheduler's reads of runs waiting on the wheel (reconcile). */
import type { FindCursor } from "mongodb";
import type { RunDoc } from "../../domain/index.js";
import { RunStatus } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/** Every run waiting for its retry (or delayed start): each should have its timer on the wheel. */
export function waitingRetries(mongo: Mongo): FindCursor<Pick<RunDoc, "_id" | "jobId" | "retryAt">> {
  return mongo.c.runs.find({ status: RunStatus.RETRY_SCHEDULED }, { projection: { _id: 1, jobId: 1, retryAt: 1 } });
}
