/**
 * explain, for find and count: which access path the planner picks (IDHACK, IXSCAN <index>,
 * also for an index-ordered scan, COLLSCAN) and how many documents were examined. Shaped after MongoDB's explain output, with
 * only the fields the emulator can fill truthfully.
 */
import { commandError } from "../errors.js";
import { candidates } from "../plan.js";
import { isPlainObject, type Doc } from "../values.js";
import { optDoc, optInt, type CommandContext, type CommandSpec } from "./context.js";
import { findOrderedPlan, queryDocs } from "./read.js";

function run(ctx: CommandContext): Doc {
  const inner = optDoc(ctx, "explain");
  const verb = inner ? Object.keys(inner)[0] : undefined;
  if (!inner || (verb !== "find" && verb !== "count")) {
    throw commandError("BadValue", "explain is supported for find and count by the Kairos emulator");
  }
  const name = inner[verb];
  if (typeof name !== "string") throw commandError("InvalidNamespace", "explain: collection name must be a string");
  const filterField = verb === "find" ? "filter" : "query";
  const filter = optDoc({ ...ctx, name: verb }, filterField, inner);
  const sort = verb === "find" && isPlainObject(inner.sort) ? inner.sort : undefined;
  const skip = optInt({ ...ctx, name: verb }, "skip", inner) ?? 0;
  const limit = Math.abs(optInt({ ...ctx, name: verb }, "limit", inner) ?? 0);
  const coll = ctx.engine.collection(ctx.db, name);
  const before = ctx.engine.stats.docsExamined;
  const stage = coll ? (findOrderedPlan(coll, filter, sort, limit)?.stage ?? candidates(coll, filter).plan.stage) : "EOF";
  const nReturned = coll ? queryDocs(ctx, coll, filter, sort, skip, limit).length : 0;
  const [kind, indexName] = stage.split(" ");
  const winningPlan: Doc = indexName ? { stage: "FETCH", inputStage: { stage: kind, indexName } } : { stage: kind };
  return {
    queryPlanner: { namespace: `${ctx.db}.${name}`, parsedQuery: filter ?? {}, winningPlan, rejectedPlans: [] },
    executionStats: { executionSuccess: true, nReturned, totalDocsExamined: ctx.engine.stats.docsExamined - before },
    explainVersion: "1",
    ok: 1,
  };
}

export const explainCommands: Record<string, CommandSpec> = {
  explain: { fields: ["explain", "verbosity"], run },
};
