/**
 * aggregate, on mingo. A leading `$match` goes through the planner (indexes, fast filters); the
 * rest of the pipeline runs in mingo over the numeric view of the documents. Stages that would
 * write ($out, $merge) or need server internals are refused.
 */
import { Aggregator } from "mingo";
import { commandError, CommandError } from "../errors.js";
import type { Rec } from "../matcher.js";
import { translateMingoError } from "../matcher.js";
import { findMatching } from "../plan.js";
import { cloneValue, isNumeric, isPlainObject, toNumber, toView, type Doc } from "../values.js";
import { optArray, optDoc, optInt, type CommandContext, type CommandSpec } from "./context.js";
import { cursorReply } from "./read.js";

/** Stages mingo runs without modifying (or retaining) its input documents. */
const READ_ONLY_STAGES = new Set(["$match", "$sort", "$skip", "$limit", "$count", "$group", "$sortByCount"]);

const REFUSED_STAGES = new Map([
  ["$out", "writing stages are not supported; insert the results with a separate write"],
  ["$merge", "writing stages are not supported; insert the results with a separate write"],
  ["$changeStream", "change streams need a replica set"],
  ["$collStats", "storage statistics are not available"],
  ["$indexStats", "index statistics are not available"],
  ["$currentOp", "operation introspection is not available"],
  ["$listSessions", "sessions are not tracked"],
  ["$listLocalSessions", "sessions are not tracked"],
  ["$planCacheStats", "there is no plan cache"],
  ["$search", "Atlas Search is not available"],
  ["$searchMeta", "Atlas Search is not available"],
  ["$vectorSearch", "Atlas Vector Search is not available"],
  ["$geoNear", "geospatial indexes are not supported"],
]);

function validatePipeline(pipeline: unknown[]): Doc[] {
  for (const stage of pipeline) {
    if (!isPlainObject(stage) || Object.keys(stage).length !== 1) {
      throw new CommandError(40323, "A pipeline stage specification object must contain exactly one field.");
    }
    const name = Object.keys(stage)[0];
    const why = REFUSED_STAGES.get(name);
    if (why) throw commandError("BadValue", `${name} is not supported by the Kairos emulator: ${why}`);
  }
  return pipeline as Doc[];
}

function run(ctx: CommandContext): Doc {
  const target = ctx.body.aggregate;
  const pipelineArg = optArray(ctx, "pipeline");
  if (!pipelineArg) throw commandError("FailedToParse", "'pipeline' option must be specified as an array");
  const pipeline = validatePipeline(pipelineArg);
  const cursorOpt = optDoc(ctx, "cursor");
  if (!cursorOpt) throw commandError("FailedToParse", "The 'cursor' option is required, except for aggregate with the explain argument");
  const batchSize = optInt(ctx, "batchSize", cursorOpt);
  const dbLevel = isNumeric(target) && toNumber(target) === 1;
  if (!dbLevel && typeof target !== "string") throw commandError("InvalidNamespace", "aggregate requires a collection name or 1");
  if (dbLevel && Object.keys(pipeline[0] ?? {})[0] !== "$documents") {
    throw commandError("InvalidNamespace", "{aggregate: 1} is only supported with a leading $documents stage by the Kairos emulator");
  }
  ctx.engine.stats.opcounters.command++;
  const ns = dbLevel ? `${ctx.db}.$cmd.aggregate` : `${ctx.db}.${target as string}`;
  const coll = dbLevel ? undefined : ctx.engine.collection(ctx.db, target as string);

  let input: Rec[] = [];
  let rest = pipeline;
  if (coll) {
    const first = pipeline[0];
    if (first && isPlainObject(first.$match)) {
      input = findMatching(coll, first.$match, ctx.engine.stats);
      rest = pipeline.slice(1);
    } else {
      input = [...coll.docs.values()];
      ctx.engine.stats.docsExamined += input.length;
    }
  }
  if (rest.length === 0) return cursorReply(ctx, ns, input.map((r) => r.doc), batchSize, null);

  const readOnly = rest.every((s) => READ_ONLY_STAGES.has(Object.keys(s)[0]));
  // Documents that mingo returns untouched map back to their exact (typed) stored form.
  const back = new Map<Doc, Doc>();
  const views = input.map((r) => {
    if (!readOnly) return cloneValue(r.view);
    if (r.view !== r.doc) back.set(r.view, r.doc);
    return r.view;
  });
  let result: Doc[];
  try {
    const agg = new Aggregator(toView(rest), {
      scriptEnabled: false,
      variables: { NOW: ctx.now },
      collectionResolver: (name: string) => {
        const other = ctx.engine.collection(ctx.db, name);
        return other ? [...other.docs.values()].map((r) => cloneValue(r.view)) : [];
      },
    });
    result = agg.run(views) as Doc[];
  } catch (e) {
    throw e instanceof CommandError ? e : translateMingoError(e);
  }
  return cursorReply(ctx, ns, result.map((d) => back.get(d) ?? d), batchSize, null);
}

export const aggregateCommands: Record<string, CommandSpec> = {
  aggregate: {
    fields: ["aggregate", "pipeline", "cursor", "allowDiskUse", "bypassDocumentValidation", "hint"],
    unsupported: ["collation", "let", "explain", "exchange"],
    run,
  },
};
