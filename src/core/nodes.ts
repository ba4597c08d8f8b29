/** What users read about executor nodes and the resources running attempts hold on them. */
import { listedOwner, onlyVisible } from "../auth/index.js";
import type { Principal } from "../auth/index.js";
import type { NodeDoc } from "../domain/index.js";
import { NotFoundError, ValidationError } from "../domain/index.js";
import type { Mongo, NodeListing } from "../store/index.js";
import { findNode, pageNodes } from "../store/index.js";
import { checkPoolName } from "./spec.js";
import { toPage, type Page, type PageQuery } from "../store/index.js";
import { findAllocations, type Allocation } from "./allocations.js";

/** The longest name prefix `nodes(filter: { namePrefix })` takes (a host name is at most 253 characters). */
const MAX_NODE_NAME_PREFIX = 255;

export class NodeReads {
  constructor(private readonly deps: { mongo: Mongo }) {}

  /**
   * A page of the nodes, by name, the latest start of a name first (nodes are shared: any
   * signed-in user sees them); of one pool, in some states, whose name starts with a prefix, when
   * the filter says so.
   */
  list(match: NodeListing, page: PageQuery): Promise<Page<NodeDoc>> {
    if (match.pool != null) checkPoolName("filter.pool", match.pool);
    if (match.status != null && match.status.length === 0) throw new ValidationError("filter.status", "name at least one state, or leave it out for every state");
    const prefix = match.namePrefix;
    if (prefix != null && (prefix.length === 0 || prefix.length > MAX_NODE_NAME_PREFIX)) {
      throw new ValidationError(
        "filter.namePrefix",
        `must be the start of a node name, 1–${MAX_NODE_NAME_PREFIX} characters (case-sensitive), or left out for every name; got ${prefix.length === 0 ? "an empty string" : `${prefix.length} characters`}`,
      );
    }
    return pageNodes(this.deps.mongo, match, page);
  }

  async get(nodeId: string): Promise<NodeDoc> {
    const doc = await findNode(this.deps.mongo, nodeId);
    if (!doc) throw new NotFoundError("node", nodeId);
    return doc;
  }

  /**
   * Live allocations (running attempts), newest first; on one node when `nodeId` is given. Users
   * see their own runs', admins everyone's.
   */
  async allocations(caller: Principal, nodeId: string | null | undefined, page: PageQuery): Promise<Page<Allocation & { _id: string }>> {
    const found = await findAllocations(this.deps.mongo, { nodeId, ownerId: listedOwner(caller) }, page.after, page.size + 1);
    const shown = onlyVisible(caller, found).map((a) => ({ ...a, _id: a.runId }));
    return toPage(shown, page.size, (a) => a.since);
  }
}
