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

export class NodeReads {
  constructor(private readonly deps: { mongo: Mongo }) {}

  /**
   * A page of the nodes, by name, the latest start of a name first (nodes are shared: any
   * signed-in user sees them); of one pool, in some states, when the filter says so.
   */
  list(match: NodeListing, page: PageQuery): Promise<Page<NodeDoc>> {
    if (match.pool != null) checkPoolName("filter.pool", match.pool);
    if (match.status != null && match.status.length === 0) throw new ValidationError("filter.status", "name at least one state, or leave it out for every state");
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
