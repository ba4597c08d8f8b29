/**
 * Live resource allocations: what running attempts have reserved on their nodes. Derived from the
 * RUNNING runs themselves (their node and their spec's resources) rather than kept in a collection
 * of their own, so no run costs an extra write and an allocation can never outlive its run.
 */
import type { Mongo } from "../store/index.js";
import { findRunningOn, findRunningOnAnyNode, findRunningRuns, liveNodeIds, type AllocatedRun, type AllocationScope } from "../store/index.js";
import type { ResourceRequest } from "../domain/index.js";
import { resourcesOf } from "./resources.js";

export interface Allocation extends ResourceRequest {
  runId: string;
  nodeId: string;
  ownerId: string;
  since: Date;
}

function toAllocation(r: AllocatedRun): Allocation {
  return { runId: r._id, nodeId: r.nodeId ?? "", ownerId: r.ownerId, since: r.startedAt ?? new Date(0), ...resourcesOf(r.spec) };
}

/** Allocations of `scope` (see findRunningRuns) after the cursor `after`, newest first, `limit` at most. */
export async function findAllocations(
  mongo: Mongo,
  scope: AllocationScope,
  after: string | null | undefined,
  limit: number,
): Promise<Allocation[]> {
  return (await findRunningRuns(mongo, scope, after, limit)).map(toAllocation);
}

/** CPU and memory reserved on each of `nodeIds` by its running attempts. */
export async function allocatedOn(mongo: Mongo, nodeIds: readonly string[]): Promise<Map<string, { cpu: number; memoryMb: number }>> {
  return sumByNode(await findRunningOn(mongo, nodeIds), nodeIds);
}

/**
 * CPU and memory reserved on every live (ONLINE or DRAINING) node that has running attempts,
 * however many nodes there are: the RUNNING runs on a node, then which of their nodes are live.
 */
export async function allocatedOnLiveNodes(mongo: Mongo): Promise<Map<string, { cpu: number; memoryMb: number }>> {
  const runs = await findRunningOnAnyNode(mongo);
  const live = await liveNodeIds(mongo, [...new Set(runs.map((r) => r.nodeId ?? ""))]);
  return sumByNode(runs, live);
}

function sumByNode(runs: readonly AllocatedRun[], nodeIds: readonly string[]): Map<string, { cpu: number; memoryMb: number }> {
  const out = new Map(nodeIds.map((id) => [id, { cpu: 0, memoryMb: 0 }]));
  for (const d of runs) {
    const a = toAllocation(d);
    const t = out.get(a.nodeId);
    if (!t) continue;
    t.cpu = Math.round((t.cpu + a.cpu) * 1000) / 1000;
    t.memoryMb += a.memoryMb;
  }
  return out;
}
