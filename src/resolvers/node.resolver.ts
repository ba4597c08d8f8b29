import { Arg, Ctx, ID, Query, Resolver } from "type-graphql";
import { NotFoundError } from "../errors.js";
import { ExecutorNode } from "../schema/node.type.js";
import { requireUser, type Context } from "./context.js";
import { toNode } from "./mappers.js";

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
}
