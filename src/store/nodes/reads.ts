/** Reads of the executor nodes' documents, for the API and for the defaults of a pool's runs. */
import type { Filter } from "mongodb";
import type { NodeDoc, NodeStatus } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";
import { nodeAfter, prefixRange, toNodePage, type Page, type PageQuery } from "../pages.js";

/** Every node's capacity summed, per status (one aggregation over all the nodes, however many). */
export interface NodeStatusTotals {
  status: NodeStatus;
  nodes: number;
  slots: number;
  running: number;
  cpus: number;
  memoryMb: number;
}

export async function nodeTotalsByStatus(mongo: Mongo): Promise<NodeStatusTotals[]> {
  const rows = await mongo.c.nodes
    .aggregate<{ _id: NodeStatus } & Omit<NodeStatusTotals, "status">>([
      {
        $group: {
          _id: "$status",
          nodes: { $sum: 1 },
          slots: { $sum: "$capacity.slots" },
          running: { $sum: "$running" },
          cpus: { $sum: "$capacity.cpus" },
          memoryMb: { $sum: "$capacity.memoryMb" },
        },
      },
    ])
    .toArray();
  return rows.map(({ _id, ...t }) => ({ status: _id, ...t }));
}

/** Those of `ids` whose node is live (ONLINE or DRAINING). */
export async function liveNodeIds(mongo: Mongo, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const docs = await mongo.c.nodes.find({ _id: { $in: [...ids] }, status: { $in: ["ONLINE", "DRAINING"] } }, { projection: { _id: 1 } }).toArray();
  return docs.map((d) => d._id);
}

/** Which nodes a listing shows: those pulling from a pool, those in one of some states, those whose name starts with a prefix (case-sensitive). */
export interface NodeListing {
  pool?: string | null;
  status?: readonly NodeStatus[] | null;
  namePrefix?: string | null;
}

/**
 * A page of the nodes, by name, the latest start of a name first, then by id: (name, startedAt,
 * _id) never changes for a node (a restart is a new document), so a node added or removed between
 * pages moves no other and the walk never repeats or skips one that was there all along. Read
 * along one index to the page's end: name_started_id, or pool_name_started_id /
 * status_name_started_id (a $in of states merges their ranges in the same order); a name prefix is
 * a range of the name in each of them.
 */
export async function pageNodes(mongo: Mongo, match: NodeListing, page: PageQuery): Promise<Page<NodeDoc>> {
  const q: Filter<NodeDoc> = {};
  if (match.pool) q.pools = match.pool;
  if (match.status) q.status = { $in: [...match.status] };
  if (match.namePrefix) q.name = prefixRange(match.namePrefix);
  const after = nodeAfter(page.after);
  if (after) {
    q.$or = [
      { name: { $gt: after.name } },
      { name: after.name, startedAt: { $lt: after.startedAt } },
      { name: after.name, startedAt: after.startedAt, _id: { $gt: after.id } },
    ];
  }
  const docs = await mongo.c.nodes.find(q).sort({ name: 1, startedAt: -1, _id: 1 }).limit(page.size + 1).toArray();
  return toNodePage(docs, page.size);
}

export function findNode(mongo: Mongo, nodeId: string): Promise<NodeDoc | null> {
  return mongo.c.nodes.findOne({ _id: nodeId });
}

/** The nodes of these ids that still have their document (one query: a page of runs names their nodes with it). */
export function findNodesByIds(mongo: Mongo, ids: readonly string[]): Promise<NodeDoc[]> {
  return mongo.c.nodes.find({ _id: { $in: [...ids] } }).toArray();
}

/** The ONLINE nodes serving `pool` (at most 1,000): what its runs may ask for and get by default. */
export function findOnlinePoolNodes(mongo: Mongo, pool: string): Promise<Array<Pick<NodeDoc, "name" | "maxRun" | "defaultRun" | "isolation">>> {
  return mongo.c.nodes
    .find({ pools: pool, status: "ONLINE" }, { projection: { name: 1, maxRun: 1, defaultRun: 1, isolation: 1 }, limit: 1_000 })
    .toArray();
}
