/**
 * `Run.node` and `RunTransition.node`: the executor node a run (or one of its status changes)
 * names by id, read through the request's Lookups, so a page of runs and their histories costs one
 * store query for all their nodes. Nodes are shared (any signed-in user lists them), so whoever
 * sees the run sees its node.
 */
import { Ctx, FieldResolver, Resolver, Root } from "type-graphql";
import { ExecutorNode, Run, RunTransition } from "../schema/index.js";
import { requireUser, type Context } from "./context.js";
import { toNode } from "./mappers.js";

async function nodeOf(ctx: Context, nodeId: string | null): Promise<ExecutorNode | null> {
  requireUser(ctx);
  if (!nodeId) return null;
  const doc = await ctx.lookups.node(nodeId);
  return doc ? toNode(doc) : null;
}

@Resolver(() => Run)
export class RunNodeResolver {
  @FieldResolver(() => ExecutorNode, {
    nullable: true,
    description:
      "The node of the current or last attempt (nodeId): its name and state. Null when no attempt has started, or the node's document is gone. " +
      "A node's name never changes (a restarted executor is a new node).",
  })
  node(@Root() run: Run, @Ctx() ctx: Context): Promise<ExecutorNode | null> {
    return nodeOf(ctx, run.nodeId);
  }
}

@Resolver(() => RunTransition)
export class RunTransitionNodeResolver {
  @FieldResolver(() => ExecutorNode, { nullable: true, description: "The node this change happened on (nodeId); null when none, or the node's document is gone." })
  node(@Root() t: RunTransition, @Ctx() ctx: Context): Promise<ExecutorNode | null> {
    return nodeOf(ctx, t.nodeId);
  }
}
