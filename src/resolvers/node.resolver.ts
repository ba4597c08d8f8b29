import { Arg, Ctx, FieldResolver, ID, Int, Query, Resolver, Root } from "type-graphql";
import { allocatedOn, findAllocations } from "../core/allocations.js";
import { NotFoundError } from "../domain/errors.js";
import { ExecutorNode } from "../schema/node.type.js";
import { ResourceAllocationConnection, Resources } from "../schema/resources.type.js";
import { canSee, requireUser, type Context } from "./context.js";
import { toNode } from "./mappers.js";
import { afterDesc, connection, pageSize } from "./pagination.js";

@Resolver(() => ExecutorNode)
export class NodeResolver {
  @Query(() => [ExecutorNode], { description: "Executor nodes with their health and utilisation, by name." })
  async nodes(@Ctx() ctx: Context): Promise<ExecutorNode[]> {
    requireUser(ctx);
    const docs = await ctx.services.mongo.c.nodes.find({}).sort({ name: 1, startedAt: -1 }).limit(1_000).toArray();
    return docs.map(toNode);
  }

  @Query(() => ExecutorNode)
  async node(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<ExecutorNode> {
    requireUser(ctx);
    const doc = await ctx.services.mongo.c.nodes.findOne({ _id: id });
    if (!doc) throw new NotFoundError("node", id);
    return toNode(doc);
  }

  @FieldResolver(() => Resources, { description: "CPU and memory reserved by the runs going on this node." })
  async allocated(@Root() node: ExecutorNode, @Ctx() ctx: Context): Promise<Resources> {
    return (await ctx.loaders.allocated.load(node.id)) ?? { cpu: 0, memoryMb: 0 };
  }

  @FieldResolver(() => Resources, { description: "CPU and memory still free for runs on this node (capacity − allocated)." })
  async free(@Root() node: ExecutorNode, @Ctx() ctx: Context): Promise<Resources> {
    const used = (await ctx.loaders.allocated.load(node.id)) ?? { cpu: 0, memoryMb: 0 };
    return { cpu: Math.max(0, Math.round((node.capacity.cpus - used.cpu) * 1000) / 1000), memoryMb: Math.max(0, node.capacity.memoryMb - used.memoryMb) };
  }

  @Query(() => ResourceAllocationConnection, {
    description: "Live resource allocations (running attempts), newest first; on one node when nodeId is given. Users see their own runs', admins everyone's.",
  })
  async resources(
    @Ctx() ctx: Context,
    @Arg("nodeId", () => ID, { nullable: true }) nodeId?: string | null,
    @Arg("first", () => Int, { nullable: true }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<ResourceAllocationConnection> {
    const p = requireUser(ctx);
    const size = pageSize(first);
    const filter = { ...(nodeId ? { nodeId } : {}), ...(p.role === "ADMIN" ? {} : { ownerId: p.userId }), ...afterDesc("startedAt", after) };
    const found = await findAllocations(ctx.services.mongo, filter, size + 1);
    const visible = found.filter((a) => canSee(p, a.ownerId)).map((a) => ({ ...a, _id: a.runId }));
    return connection(visible, size, (a) => a.since, (a) => ({ runId: a.runId, nodeId: a.nodeId, cpu: a.cpu, memoryMb: a.memoryMb, pids: a.pids, diskMb: a.diskMb, since: a.since }));
  }
}
