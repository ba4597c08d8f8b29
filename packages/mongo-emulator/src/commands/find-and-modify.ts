/**
 * findAndModify: select one document (optionally by sort), then update, replace or remove it,
 * all in one synchronous step, which is what makes `findOneAndUpdate({_id, status: 'QUEUED'}, ...)`
 * a safe claim between concurrent clients.
 */
import { commandError } from "../errors.js";
import type { Rec } from "../matcher.js";
import { findMatching } from "../plan.js";
import { compileProjection } from "../projection.js";
import { parseSort, sortBy } from "../sort.js";
import { applyUpdate, buildUpsertDoc, compileArrayFilters, copyForUpdate, parseUpdate, touchedFields } from "../update/index.js";
import { type Doc } from "../values.js";
import { collectionArg, optArray, optBool, optDoc, type CommandContext, type CommandSpec } from "./context.js";
import { hintCheck } from "./write.js";

function selectOne(ctx: CommandContext, name: string, query: Doc, sort: Doc | undefined): Rec | undefined {
  const coll = ctx.engine.collection(ctx.db, name);
  if (!coll) return undefined;
  if (sort && parseSort(sort).fields.length > 0) {
    return sortBy(findMatching(coll, query, ctx.engine.stats), sort, (r) => r.doc)[0];
  }
  return findMatching(coll, query, ctx.engine.stats, 1)[0];
}

function run(ctx: CommandContext): Doc {
  const name = collectionArg(ctx);
  const query = optDoc(ctx, "query") ?? {};
  const sort = optDoc(ctx, "sort");
  const remove = optBool(ctx, "remove") ?? false;
  const returnNew = optBool(ctx, "new") ?? false;
  const upsert = optBool(ctx, "upsert") ?? false;
  const project = compileProjection(optDoc(ctx, "fields"));
  const hasUpdate = ctx.body.update !== undefined && ctx.body.update !== null;
  if (remove && hasUpdate) throw commandError("FailedToParse", "Cannot specify both an update and remove=true");
  if (!remove && !hasUpdate) throw commandError("FailedToParse", "Either an update or remove=true must be specified");
  if (remove && returnNew) throw commandError("FailedToParse", "Cannot specify both new=true and remove=true; 'remove' always returns the deleted document");
  if (remove && upsert) throw commandError("FailedToParse", "Cannot specify both upsert=true and remove=true");
  const out = (d: Doc | undefined | null) => (d ? (project ? project(d) : d) : null);
  const coll = ctx.engine.collection(ctx.db, name);
  hintCheck(ctx, coll, ctx.body.hint);

  if (remove) {
    ctx.engine.stats.opcounters.delete++;
    const arrayFilters = optArray(ctx, "arrayFilters");
    if (arrayFilters) throw commandError("FailedToParse", "Cannot specify arrayFilters and remove=true");
    const rec = selectOne(ctx, name, query, sort);
    if (rec) coll!.remove(rec);
    return { lastErrorObject: { n: rec ? 1 : 0 }, value: out(rec?.doc), ok: 1 };
  }

  ctx.engine.stats.opcounters.update++;
  const parsed = parseUpdate(ctx.body.update);
  const arrayFilters = compileArrayFilters(ctx.body.arrayFilters, parsed);
  const uctx = { filter: query, arrayFilters, inserting: false, now: ctx.now };
  const rec = selectOne(ctx, name, query, sort);
  if (rec) {
    const { doc, modified } = applyUpdate(copyForUpdate(rec.doc, parsed), parsed, uctx);
    const after = modified ? coll!.replace(rec, doc, touchedFields(parsed)).doc : rec.doc;
    return { lastErrorObject: { n: 1, updatedExisting: true }, value: out(returnNew ? after : rec.doc), ok: 1 };
  }
  if (upsert) {
    const doc = buildUpsertDoc(query, parsed, { ...uctx, inserting: true });
    ctx.engine.ensureCollection(ctx.db, name).insert(doc);
    return { lastErrorObject: { n: 1, updatedExisting: false, upserted: doc._id }, value: out(returnNew ? doc : null), ok: 1 };
  }
  return { lastErrorObject: { n: 0, updatedExisting: false }, value: null, ok: 1 };
}

const spec: CommandSpec = {
  write: true,
  fields: ["findAndModify", "findandmodify", "query", "sort", "remove", "update", "new", "fields", "upsert", "bypassDocumentValidation", "arrayFilters", "hint"],
  unsupported: ["collation", "let"],
  run,
};

export const findAndModifyCommands: Record<string, CommandSpec> = { findAndModify: spec, findandmodify: spec };
