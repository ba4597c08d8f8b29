/**
 * The RUNNING runs as resource allocations: their node, owner, start and the resources of their
 * spec (core/allocations.ts turns them into allocations).
 */
import type { Filter } from "mongodb";
import type { RunDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";
import { afterDesc } from "../pages.js";

/** Whose allocations, on which node (null or absent: every owner, every node). */
export interface AllocationScope {
  nodeId?: string | null;
  ownerId: string | null;
}

export type AllocatedRun = Pick<RunDoc, "_id" | "nodeId" | "ownerId" | "startedAt" | "spec">;

const PROJECTION = { _id: 1, nodeId: 1, ownerId: 1, startedAt: 1, "spec.resources": 1 } as const;

/**
 * RUNNING runs on `scope.nodeId` (absent: on any node), of `ownerId` (null: anyone's), after the
 * cursor `after`, newest first, `limit` at most. (Until the #13 re-cut the "on some node"
 * condition was spread after the caller's and overwrote its nodeId: every node's runs came back.)
 */
export async function findRunningRuns(
  mongo: Mongo,
  scope: AllocationScope,
  after: string | null | undefined,
  limit: number,
): Promise<AllocatedRun[]> {
  const filter = { ...(scope.nodeId ? { nodeId: scope.nodeId } : {}), ...(scope.ownerId === null ? {} : { ownerId: scope.ownerId }), ...afterDesc("startedAt", after) };
  const docs = await mongo.c.runs
    .find({ status: "RUNNING", nodeId: { $ne: null }, ...filter } as Filter<RunDoc>, { projection: PROJECTION, sort: { startedAt: -1, _id: -1 }, limit })
    .toArray();
  return docs as AllocatedRun[];
}

/** Every RUNNING run that is on a node (their number is bounded by the nodes' slots). */
export async function findRunningOnAnyNode(mongo: Mongo): Promise<AllocatedRun[]> {
  const docs = await mongo.c.runs.find({ status: "RUNNING", nodeId: { $ne: null } } as Filter<RunDoc>, { projection: PROJECTION }).toArray();
  return docs as AllocatedRun[];
}

/** The RUNNING runs on `nodeIds`. */
export async function findRunningOn(mongo: Mongo, nodeIds: readonly string[]): Promise<AllocatedRun[]> {
  const docs = await mongo.c.runs
    .find({ status: "RUNNING", nodeId: { $in: [...nodeIds] } } as Filter<RunDoc>, { projection: PROJECTION })
    .toArray();
  return docs as AllocatedRun[];
}
