/**
 * What every command handler receives, and helpers that read command arguments with
 * MongoDB-style errors naming the offending field (`BSON field 'find.limit' is the wrong type`).
 */
import { commandError } from "../errors.js";
import type { Engine } from "../engine.js";
import { isNumeric, isPlainObject, toNumber, type Doc } from "../values.js";

export interface ConnectionInfo {
  readonly id: number;
  readonly remote: string;
  client: Doc | null;
}

export interface CommandContext {
  readonly engine: Engine;
  /** Target database ($db). */
  readonly db: string;
  /** Command name as sent (first field of the body). */
  readonly name: string;
  /** Command body with document sequences merged in. */
  readonly body: Doc;
  readonly conn: ConnectionInfo;
  readonly now: Date;
  readonly server: ServerInfo;
}

export interface ServerInfo {
  readonly host: string;
  readonly port: number;
  readonly startedAt: number;
  readonly durable: boolean;
  connections(): { current: number; totalCreated: number };
}

export type Handler = (ctx: CommandContext) => Doc;

export interface CommandSpec {
  run: Handler;
  /** Command-specific fields accepted besides the generic ones; undefined accepts any field. */
  fields?: readonly string[];
  /** Fields MongoDB knows that the emulator refuses (each gets a "not supported" error). */
  unsupported?: readonly string[];
  /** The command changes data: writeConcern {j: true} waits for the journal. */
  write?: boolean;
}

/** Fields any command may carry (drivers add them freely). */
export const GENERIC_FIELDS = new Set([
  "$db",
  "lsid",
  "$clusterTime",
  "$readPreference",
  "readConcern",
  "writeConcern",
  "comment",
  "maxTimeMS",
  "apiVersion",
  "apiStrict",
  "apiDeprecationErrors",
  "$client",
  "mayBypassWriteBlocking",
]);

function bsonTypeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "double";
  if (v instanceof Date) return "date";
  const t = (v as { _bsontype?: string })?._bsontype;
  return t ? t.toLowerCase() : "object";
}

function wrongType(cmd: string, field: string, v: unknown, expected: string): Error {
  return commandError("TypeMismatch", `BSON field '${cmd}.${field}' is the wrong type '${bsonTypeName(v)}', expected ${expected}`);
}

export function optInt(ctx: CommandContext, field: string, body: Doc = ctx.body): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!isNumeric(v)) throw wrongType(ctx.name, field, v, "types '[long, int, decimal, double]'");
  const n = toNumber(v);
  if (!Number.isFinite(n)) throw commandError("BadValue", `BSON field '${ctx.name}.${field}' must be a finite number`);
  return Math.trunc(n);
}

export function optBool(ctx: CommandContext, field: string, body: Doc = ctx.body): boolean | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "boolean") return v;
  if (isNumeric(v)) return toNumber(v) !== 0;
  throw wrongType(ctx.name, field, v, "type 'bool'");
}

export function optDoc(ctx: CommandContext, field: string, body: Doc = ctx.body): Doc | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!isPlainObject(v)) throw wrongType(ctx.name, field, v, "type 'object'");
  return v;
}

export function optArray(ctx: CommandContext, field: string, body: Doc = ctx.body): unknown[] | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw wrongType(ctx.name, field, v, "type 'array'");
  return v;
}

/** The collection name given as the command's value (`{find: "runs"}`). */
export function collectionArg(ctx: CommandContext): string {
  const v = ctx.body[ctx.name];
  if (typeof v !== "string") {
    if ((v as { _bsontype?: string })?._bsontype === "Binary") {
      throw commandError("BadValue", `${ctx.name} by collection UUID is not supported by the Kairos emulator`);
    }
    throw commandError("InvalidNamespace", `collection name has invalid type ${bsonTypeName(v)}`);
  }
  if (v.length === 0) throw commandError("InvalidNamespace", `Invalid namespace specified '${ctx.db}.'`);
  return v;
}

/** Rejects `hint` values naming an index that does not exist, as MongoDB does; otherwise ignored. */
export function checkHint(ctx: CommandContext, hint: unknown, indexNames: string[], keyPatterns: string[]): void {
  if (hint === undefined || hint === null) return;
  if (typeof hint === "string") {
    if (!indexNames.includes(hint)) throw commandError("BadValue", "hint provided does not correspond to an existing index");
    return;
  }
  if (isPlainObject(hint)) {
    if (Object.keys(hint).length === 0) return;
    if ("$natural" in hint) return;
    const text = JSON.stringify(Object.fromEntries(Object.entries(hint).map(([k, v]) => [k, isNumeric(v) ? toNumber(v) : v])));
    if (!keyPatterns.includes(text)) throw commandError("BadValue", "hint provided does not correspond to an existing index");
    return;
  }
  throw commandError("FailedToParse", "hint must be a string or an object");
}
