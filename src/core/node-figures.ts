/**
 * `clusterStats { nodes(filter, first, after) }` (docs/cluster-stats.md): a page of the nodes, in
 * the order and with the cursors of the `nodes` query (NodeReads.list: by name, the latest start of
 * a name first, then by id), each with what the runs going on it reserve. The figures' totals
 * (`nodeCount`, `capacity`) cover every node, whichever page is shown.
 *
 * One page per (filter, size, cursor) is kept for CACHE_MS, as the figures are: the
 * clusterStatsUpdated feed resolves the page of every subscriber at each push, and subscribers
 * watching the same page cost one read.
 */
import type { NodeDoc } from "../domain/index.js";
import type { Clock } from "../shared-state/index.js";
import type { Mongo, NodeListing, Page, PageQuery } from "../store/index.js";
import { allocatedOn } from "./allocations.js";
import { NodeReads } from "./nodes.js";

/** A node and the CPU and memory its running attempts reserve (nothing on a node that is not live). */
export interface NodeFigures {
  node: NodeDoc;
  allocated: { cpu: number; memoryMb: number };
}

const LIVE: ReadonlySet<string> = new Set(["ONLINE", "DRAINING"]);

export class NodeFigurePages {
  private readonly cache = new Map<string, { at: number; value: Promise<Page<NodeFigures>> }>();
  private readonly nodes: NodeReads;

  constructor(
    private readonly deps: { mongo: Mongo; clock: Clock; cacheMs: number },
  ) {
    this.nodes = new NodeReads({ mongo: deps.mongo });
  }

  /** The page of nodes `match` and `page` name (checked as the `nodes` query checks them), with their reservations. */
  page(match: NodeListing, page: PageQuery): Promise<Page<NodeFigures>> {
    const key = JSON.stringify([match.pool ?? null, match.status ?? null, match.namePrefix ?? null, page.size, page.after ?? null]);
    const now = this.deps.clock();
    const hit = this.cache.get(key);
    if (hit && now - hit.at < this.deps.cacheMs) return hit.value;
    if (this.cache.size > 1_000) for (const [k, v] of this.cache) if (now - v.at >= this.deps.cacheMs) this.cache.delete(k);
    const value = this.read(match, page);
    this.cache.set(key, { at: now, value });
    // A failed read (a bad cursor or filter among them) is not kept.
    value.catch(() => this.cache.get(key)?.value === value && this.cache.delete(key));
    return value;
  }

  private async read(match: NodeListing, page: PageQuery): Promise<Page<NodeFigures>> {
    const docs = await this.nodes.list(match, page);
    const live = docs.edges.map((e) => e.node).filter((n) => LIVE.has(n.status)).map((n) => n._id);
    const allocated = await allocatedOn(this.deps.mongo, live);
    return {
      edges: docs.edges.map(({ cursor, node }) => ({ cursor, node: { node, allocated: allocated.get(node._id) ?? { cpu: 0, memoryMb: 0 } } })),
      pageInfo: docs.pageInfo,
    };
  }
}
