/**
 * Live resource allocations: what running attempts have reserved on their nodes. Derived from the
 * RUNNING runs themselves (their node and their spec's resources) rather than kept in a collection
 * of their own, so no run costs an extra write and an allocation can never outlive its run.
 */
import type { Filter } from "mongodb";
import type { Mongo } from "../store/mongo.js";
import type { ResourceRequest, RunDoc } from "../domain/documents.js";
import { resourcesOf } from "./resources.js";

export interface Allocation extends ResourceRequest {
  runId: string;
  nodeId: string;
  ownerId: string;
  since: Date;
}

const PROJECTION = { _id: 1, nodeId: 1, ownerId: 1, startedAt: 1, "spec.resources": 1 } as const;

function toAllocation(r: Pick<RunDoc, "_id" | "nodeId" | "ownerId" | "startedAt" | "spec">): Allocation {
  return { runId: r._id, nodeId: r.nodeId ?? "", ownerId: r.ownerId, since: r.startedAt ?? new Date(0), ...resourcesOf(r.spec) };
}

/** Allocations matching `filter` (plus RUNNING), newest first, `limit` at most. */
export async function findAllocations(mongo: Mongo, filter: Filter<RunDoc>, limit: number): Promise<Allocation[]> {
  const docs = await mongo.c.runs
    .find({ ...filter, status: "RUNNING", nodeId: { $ne: null } } as Filter<RunDoc>, { projection: PROJECTION, sort: { startedAt: -1, _id: -1 }, limit })
    .toArray();
  return docs.map((d) => toAllocation(d as RunDoc));
}

/** CPU and memory reserved on each of `nodeIds` by its running attempts. */
export async function allocatedOn(mongo: Mongo, nodeIds: readonly string[]): Promise<Map<string, { cpu: number; memoryMb: number }>> {
  const out = new Map(nodeIds.map((id) => [id, { cpu: 0, memoryMb: 0 }]));
  const docs = await mongo.c.runs
    .find({ status: "RUNNING", nodeId: { $in: [...nodeIds] } } as Filter<RunDoc>, { projection: PROJECTION })
    .toArray();
  for (const d of docs) {
    const a = toAllocation(d as RunDoc);
    const t = out.get(a.nodeId);
    if (!t) continue;
    t.cpu = Math.round((t.cpu + a.cpu) * 1000) / 1000;
    t.memoryMb += a.memoryMb;
  }
  return out;
}
