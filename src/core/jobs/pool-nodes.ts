/**
 * The online nodes of a pool, for its run defaults, maximums and network modes
 * (core/resources.ts). Read at most once per POOL_NODES_TTL_MS per pool: a burst of submissions
 * costs no query each, and a node that just came online is seen within a second or two.
 */
import type { Clock } from "../../shared-state/index.js";
import type { Mongo } from "../../store/index.js";
import { findOnlinePoolNodes } from "../../store/index.js";
import type { PoolNode } from "../spec.js";

/** How long a pool's list of online nodes is reused. */
const POOL_NODES_TTL_MS = 2_000;

export class PoolNodes {
  /** Each pool's online nodes as last read, and when. */
  private readonly cache = new Map<string, { at: number; nodes: Promise<PoolNode[]> }>();

  constructor(private readonly deps: { mongo: Mongo; clock: Clock }) {}

  of(pool: string | null | undefined): Promise<PoolNode[]> {
    const name = pool ?? "default";
    const now = this.deps.clock();
    const hit = this.cache.get(name);
    if (hit && now - hit.at < POOL_NODES_TTL_MS) return hit.nodes;
    const nodes = findOnlinePoolNodes(this.deps.mongo, name);
    if (this.cache.size > 1_000) this.cache.clear();
    this.cache.set(name, { at: now, nodes });
    nodes.catch(() => this.cache.delete(name));
    return nodes;
  }
}
