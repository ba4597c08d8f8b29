/** What a log write is checked against: the claim each run holds now (see core/logs/writer.ts). */
import type { RunDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

export type RunClaimView = Pick<RunDoc, "_id" | "ownerId" | "status" | "fencingToken">;

export function findRunClaims(mongo: Mongo, runIds: readonly string[]): Promise<RunClaimView[]> {
  return mongo.c.runs.find({ _id: { $in: [...runIds] } }, { projection: { _id: 1, ownerId: 1, status: 1, fencingToken: 1 } }).toArray() as Promise<RunClaimView[]>;
}
