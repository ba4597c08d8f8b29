/**
 * Command dispatch: finds the handler, validates generic and command-specific fields, refuses
 * transactions, and turns every failure into a MongoDB-shaped error reply. A handler runs to
 * completion synchronously, so each command is atomic with respect to all other clients.
 */
import { CommandError, commandError, ErrorCode } from "../errors.js";
import type { Doc } from "../values.js";
import { isPlainObject } from "../values.js";
import { adminCommands } from "./admin.js";
import { aggregateCommands } from "./aggregate.js";
import { GENERIC_FIELDS, type CommandContext, type CommandSpec } from "./context.js";
import { ddlCommands } from "./ddl.js";
import { explainCommands } from "./explain.js";
import { findAndModifyCommands } from "./find-and-modify.js";
import { readCommands } from "./read.js";
import { writeCommands } from "./write.js";

export type { CommandContext, ConnectionInfo, ServerInfo } from "./context.js";

const registry: Record<string, CommandSpec> = {
  ...readCommands,
  ...writeCommands,
  ...findAndModifyCommands,
  ...aggregateCommands,
  ...ddlCommands,
  ...explainCommands,
};
Object.assign(registry, adminCommands(() => Object.keys(registry).sort()));

/** Commands the driver may send over legacy OP_QUERY (the first handshake). */
export const OP_QUERY_COMMANDS = new Set(["hello", "isMaster", "ismaster"]);

const TRANSACTION_FIELDS = ["txnNumber", "startTransaction", "autocommit"];

export interface CommandResult {
  reply: Doc;
  /** The command wrote data and asked for journaled acknowledgement (writeConcern j: true). */
  waitForJournal: boolean;
}

function validateFields(name: string, spec: CommandSpec, body: Doc): void {
  if (!spec.fields) return;
  for (const field of Object.keys(body)) {
    if (field === name || GENERIC_FIELDS.has(field) || spec.fields.includes(field)) continue;
    if (spec.unsupported?.includes(field)) {
      throw commandError("BadValue", `option '${name}.${field}' is not supported by the Kairos emulator`);
    }
    throw commandError("BadValue", `BSON field '${name}.${field}' is an unknown field`);
  }
}

function checkReadConcern(body: Doc): void {
  const rc = body.readConcern;
  if (!isPlainObject(rc) || rc.level === undefined) return;
  if (!["local", "available", "majority"].includes(String(rc.level))) {
    throw commandError("BadValue", `readConcern level '${String(rc.level)}' is not supported by the Kairos emulator (local, available and majority are)`);
  }
}

/** Runs one command. Never throws: every error becomes an `{ok: 0}` reply. */
export function runCommand(ctx: Omit<CommandContext, "name">): CommandResult {
  const name = Object.keys(ctx.body)[0];
  const spec = name === undefined ? undefined : registry[name];
  try {
    if (name === undefined) throw commandError("FailedToParse", "command body is empty");
    if (!spec) throw new CommandError(ErrorCode.CommandNotFound, `no such command: '${name}'`);
    for (const f of TRANSACTION_FIELDS) {
      if (f in ctx.body) throw commandError("IllegalOperation", "Transaction numbers are only allowed on a replica set member or mongos");
    }
    validateFields(name, spec, ctx.body);
    checkReadConcern(ctx.body);
    if (spec.write !== true && name !== "aggregate") ctx.engine.stats.opcounters.command++;
    const reply = spec.run({ ...ctx, name });
    const wc = ctx.body.writeConcern;
    return { reply, waitForJournal: spec.write === true && isPlainObject(wc) && wc.j === true };
  } catch (e) {
    if (e instanceof CommandError) return { reply: e.toReply(), waitForJournal: false };
    const message = e instanceof Error ? e.message : String(e);
    return { reply: { ok: 0, errmsg: `internal error in ${name}: ${message}`, code: ErrorCode.InternalError, codeName: "InternalError" }, waitForJournal: false };
  }
}

export function isKnownCommand(name: string): boolean {
  return name in registry;
}
