import type { RunDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

export function findRun(mongo: Mongo, runId: string): Promise<RunDoc | null> {
  return mongo.c.runs.findOne({ _id: runId });
}
