/**
 * insert, update and delete. Each statement is applied on its own (MongoDB gives no atomicity
 * across statements either); a failing statement becomes a `writeErrors` entry with its index,
 * and an ordered batch stops there. The reply shapes are those the driver turns into
 * `MongoServerError` / `MongoBulkWriteError`.
 */
import { ObjectId } from "bson";
import type { Collection } from "../collection.js";
import { CommandError, commandError, ErrorCode } from "../errors.js";
import { findMatching } from "../plan.js";
import { applyUpdate, buildUpsertDoc, compileArrayFilters, copyForUpdate, parseUpdate, touchedFields } from "../update/index.js";
import { isNumeric, isPlainObject, toNumber, type Doc } from "../values.js";
import { checkHint, collectionArg, optArray, optBool, type CommandContext, type CommandSpec } from "./context.js";

function statements(ctx: CommandContext, field: string): Doc[] {
  const list = optArray(ctx, field);
  if (!list) throw commandError("FailedToParse", `BSON field '${ctx.name}.${field}' is missing but a required field`);
  for (const s of list) {
    if (!isPlainObject(s)) throw commandError("TypeMismatch", `BSON field '${ctx.name}.${field}' must contain only documents`);
  }
  if (list.length > 100_000) throw commandError("InvalidOptions", `Write batch sizes must be between 1 and 100000. Got ${list.length} operations.`);
  return list as Doc[];
}

function checkStatementFields(ctx: CommandContext, field: string, stmt: Doc, allowed: readonly string[], unsupported: readonly string[]): void {
  for (const k of Object.keys(stmt)) {
    if (unsupported.includes(k)) {
      throw commandError("BadValue", `option '${ctx.name}.${field}.${k}' is not supported by the Kairos emulator`);
    }
    if (!allowed.includes(k)) {
      throw commandError("BadValue", `BSON field '${ctx.name}.${field}.${k}' is an unknown field`);
    }
  }
}

function hintCheck(ctx: CommandContext, coll: Collection | undefined, hint: unknown): void {
  if (hint === undefined) return;
  const specs = coll ? coll.indexSpecs() : [];
  checkHint(
    ctx,
    hint,
    specs.map((s) => s.name),
    specs.map((s) => JSON.stringify(Object.fromEntries(Object.entries(s.key).map(([k, v]) => [k, isNumeric(v) ? toNumber(v) : v])))),
  );
}

/** Runs statements, collecting CommandErrors as write errors; other exceptions propagate. */
function runBatch<T>(ctx: CommandContext, items: T[], each: (item: T, index: number) => void): Doc[] {
  const ordered = optBool(ctx, "ordered") ?? true;
  const writeErrors: Doc[] = [];
  for (let i = 0; i < items.length; i++) {
    try {
      each(items[i], i);
    } catch (e) {
      if (!(e instanceof CommandError)) throw e;
      writeErrors.push(e.toWriteError(i));
      if (ordered) break;
    }
  }
  return writeErrors;
}

function withErrors(reply: Doc, writeErrors: Doc[]): Doc {
  if (writeErrors.length > 0) reply.writeErrors = writeErrors;
  reply.ok = 1;
  return reply;
}

const insert: CommandSpec = {
  write: true,
  fields: ["insert", "documents", "ordered", "bypassDocumentValidation"],
  unsupported: ["let"],
  run(ctx) {
    const name = collectionArg(ctx);
    const docs = statements(ctx, "documents");
    const coll = docs.length > 0 ? ctx.engine.ensureCollection(ctx.db, name) : undefined;
    let n = 0;
    const writeErrors = runBatch(ctx, docs, (doc) => {
      ctx.engine.stats.opcounters.insert++;
      coll!.insert(doc._id === undefined ? { _id: new ObjectId(), ...doc } : doc);
      n++;
    });
    return withErrors({ n }, writeErrors);
  },
};

export interface UpdateOutcome {
  n: number;
  nModified: number;
  upsertedId?: unknown;
}

/** One update statement (`{q, u, upsert, multi, arrayFilters}`), shared with bulk paths. */
export function updateStatement(ctx: CommandContext, name: string, stmt: Doc, out: UpdateOutcome): void {
  const q = stmt.q;
  if (!isPlainObject(q)) throw commandError("TypeMismatch", "BSON field 'update.updates.q' is missing or not an object");
  const parsed = parseUpdate(stmt.u);
  const multi = stmt.multi === true || (isNumeric(stmt.multi) && toNumber(stmt.multi) !== 0);
  const upsert = stmt.upsert === true || (isNumeric(stmt.upsert) && toNumber(stmt.upsert) !== 0);
  if (multi && parsed.kind === "replace") {
    throw commandError("FailedToParse", "multi update is not supported for replacement-style update");
  }
  const arrayFilters = compileArrayFilters(stmt.arrayFilters, parsed);
  const coll = ctx.engine.collection(ctx.db, name);
  hintCheck(ctx, coll, stmt.hint);
  const uctx = { filter: q, arrayFilters, inserting: false, now: ctx.now };
  const matches = coll ? findMatching(coll, q, ctx.engine.stats, multi ? 0 : 1) : [];
  const touched = touchedFields(parsed);
  for (const rec of matches) {
    const { doc, modified } = applyUpdate(copyForUpdate(rec.doc, parsed), parsed, uctx);
    if (modified) coll!.replace(rec, doc, touched);
    out.n++;
    if (modified) out.nModified++;
  }
  if (matches.length === 0 && upsert) {
    const doc = buildUpsertDoc(q, parsed, { ...uctx, inserting: true });
    ctx.engine.ensureCollection(ctx.db, name).insert(doc);
    out.n++;
    out.upsertedId = doc._id;
  }
}

const UPDATE_STMT_FIELDS = ["q", "u", "upsert", "multi", "arrayFilters", "hint", "upsertSupplied"];
const UPDATE_STMT_UNSUPPORTED = ["collation", "c", "sort"];

const update: CommandSpec = {
  write: true,
  fields: ["update", "updates", "ordered", "bypassDocumentValidation"],
  unsupported: ["let"],
  run(ctx) {
    const name = collectionArg(ctx);
    const stmts = statements(ctx, "updates");
    let n = 0;
    let nModified = 0;
    const upserted: Doc[] = [];
    const writeErrors = runBatch(ctx, stmts, (stmt, index) => {
      ctx.engine.stats.opcounters.update++;
      checkStatementFields(ctx, "updates", stmt, UPDATE_STMT_FIELDS, UPDATE_STMT_UNSUPPORTED);
      const out: UpdateOutcome = { n: 0, nModified: 0 };
      try {
        updateStatement(ctx, name, stmt, out);
      } finally {
        // A multi-update that fails part-way keeps (and reports) the documents it changed.
        n += out.n;
        nModified += out.nModified;
      }
      if (out.upsertedId !== undefined) upserted.push({ index, _id: out.upsertedId });
    });
    const reply: Doc = { n, nModified };
    if (upserted.length > 0) reply.upserted = upserted;
    return withErrors(reply, writeErrors);
  },
};

const del: CommandSpec = {
  write: true,
  fields: ["delete", "deletes", "ordered"],
  unsupported: ["let"],
  run(ctx) {
    const name = collectionArg(ctx);
    const stmts = statements(ctx, "deletes");
    const coll = ctx.engine.collection(ctx.db, name);
    let n = 0;
    const writeErrors = runBatch(ctx, stmts, (stmt) => {
      ctx.engine.stats.opcounters.delete++;
      checkStatementFields(ctx, "deletes", stmt, ["q", "limit", "hint"], ["collation"]);
      if (!isPlainObject(stmt.q)) throw commandError("TypeMismatch", "BSON field 'delete.deletes.q' is missing or not an object");
      const limit = isNumeric(stmt.limit) ? toNumber(stmt.limit) : NaN;
      if (limit !== 0 && limit !== 1) {
        throw new CommandError(ErrorCode.FailedToParse, `The limit field in delete objects must be 0 or 1. Got ${String(stmt.limit)}`);
      }
      hintCheck(ctx, coll, stmt.hint);
      if (!coll) return;
      const matches = findMatching(coll, stmt.q, ctx.engine.stats, limit);
      for (const rec of matches) coll.remove(rec);
      n += matches.length;
    });
    return withErrors({ n }, writeErrors);
  },
};

export const writeCommands: Record<string, CommandSpec> = { insert, update, delete: del };
export { hintCheck };
