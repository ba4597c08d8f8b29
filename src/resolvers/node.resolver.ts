import { Arg, Ctx, FieldResolver, ID, Int, Query, Resolver, Root } from "type-graphql";
import { ExecutorNode, ExecutorNodeConnection, NodeFilter } from "../schema/index.js";
import { ResourceAllocationConnection, Resources } from "../schema/index.js";
import { requireUser, type Context } from "./context.js";
import { toAllocation, toNode } from "./mappers.js";
import { mapPage, pageArgs } from "./pagination.js";

@Resolver(() => ExecutorNode)
export class NodeResolver {
  @Query(() => ExecutorNodeConnection, {
    description: "Executor nodes with their health and utilisation, by name, the latest start of a name first (one node per executor process life). Any signed-in user.",
  })
  async nodes(
    @Ctx() ctx: Context,
    @Arg("filter", () => NodeFilter, { nullable: true }) filter?: NodeFilter | null,
    @Arg("first", () => Int, { nullable: true, description: "1–100, default 20." }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<ExecutorNodeConnection> {
    requireUser(ctx);
    const page = pageArgs(first, after);
    return mapPage(await ctx.services.nodes.list({ pool: filter?.pool ?? null, status: filter?.status ?? null, namePrefix: filter?.namePrefix ?? null }, page), toNode);
  }

  @Query(() => ExecutorNode)
  async node(@Arg("id", () => ID) id: string, @Ctx() ctx: Context): Promise<ExecutorNode> {
    requireUser(ctx);
    return toNode(await ctx.services.nodes.get(id));
  }

  @FieldResolver(() => Resources, { description: "CPU and memory reserved by the runs going on this node." })
  async allocated(@Root() node: ExecutorNode, @Ctx() ctx: Context): Promise<Resources> {
    return (await ctx.lookups.allocated(node.id)) ?? { cpu: 0, memoryMb: 0 };
  }

  @FieldResolver(() => Resources, { description: "CPU and memory still free for runs on this node (capacity − allocated)." })
  async free(@Root() node: ExecutorNode, @Ctx() ctx: Context): Promise<Resources> {
    const used = (await ctx.lookups.allocated(node.id)) ?? { cpu: 0, memoryMb: 0 };
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
    return mapPage(await ctx.services.nodes.allocations(p, nodeId, pageArgs(first, after)), toAllocation);
  }
}
