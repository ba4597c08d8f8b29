/**
 * The audit trail's one mechanism (docs/audit.md): a global middleware on every field of
 * `Mutation`, whatever resolver declares it, so a mutation added later is recorded without a line
 * here. It records who called (user, API key, role), when, from where, the mutation as `action`,
 * the ids it named or made, the outcome (OK or the error code the caller got), the arguments, and
 * for the mutations of ./audit-subjects.ts the document before and after (redacted and reduced in
 * src/core/audit). Before the mutation runs, the call's intent is stored (`begin`): should the API
 * instance die before the entry is written, the recovery pass records the call with the outcome
 * UNKNOWN. The entry is written before the answer goes out; a store failure there (or at the
 * intent) is logged and does not change the answer (the mutation has happened).
 *
 * It runs outside ErrorTranslator, so it sees the error as the client does (its code), the
 * read-only guard's refusals included. Runs started by schedulers are not mutations: nothing on
 * the run path is recorded.
 */
import { GraphQLError } from "graphql";
import type { MiddlewareFn } from "type-graphql";
import { AuditIntentError } from "../core/index.js";
import type { AuditActor } from "../domain/index.js";
import { AUDIT_SUBJECTS } from "./audit-subjects.js";
import type { Context } from "./context.js";

const MAX_IDS = 100;
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Date);

/** Arguments named `id`, `ids`, `…Id` or `…Ids` (at the top level and in an `input`), then the result's ids. */
export function targetIdsOf(args: Record<string, unknown>, result: unknown): string[] {
  const ids: string[] = [];
  const take = (v: unknown) => {
    if (typeof v === "string" && v !== "") ids.push(v);
    else if (Array.isArray(v)) for (const x of v) if (typeof x === "string" && x !== "") ids.push(x);
  };
  const fromArgs = (o: Record<string, unknown>) => {
    for (const [k, v] of Object.entries(o)) if (k === "id" || k === "ids" || /[a-z]Ids?$/.test(k)) take(v);
  };
  fromArgs(args);
  if (isObject(args.input)) fromArgs(args.input);
  // The result: a returned id, an object's id, the ids of its objects and lists one level down.
  const fromResult = (v: unknown, depth: number) => {
    if (typeof v === "string" && depth === 0) ids.push(v);
    else if (Array.isArray(v)) for (const x of v.slice(0, MAX_IDS)) fromResult(x, depth + 1);
    else if (isObject(v)) {
      if (typeof v.id === "string") ids.push(v.id);
      if (depth < 2) for (const x of Object.values(v)) if (isObject(x) || Array.isArray(x)) fromResult(x, depth + 1);
    }
  };
  fromResult(result, 0);
  return [...new Set(ids)].slice(0, MAX_IDS);
}

function actorOf(ctx: Context, result: unknown): AuditActor {
  const p = ctx.principal;
  if (p) return { userId: p.userId, username: p.username, role: p.role, apiKeyId: p.credential.kind === "apiKey" ? p.credential.keyId : null };
  // A login is made by nobody signed in yet: its actor is the user it signed in.
  const user = isObject(result) && isObject(result.user) ? result.user : null;
  if (user && typeof user.id === "string") {
    return { userId: user.id, username: typeof user.username === "string" ? user.username : null, role: typeof user.role === "string" ? user.role : null, apiKeyId: null };
  }
  return { userId: null, username: null, role: null, apiKeyId: null };
}

function outcomeOf(e: unknown): { outcome: string; error: string } {
  if (e instanceof GraphQLError && typeof e.extensions?.code === "string") return { outcome: e.extensions.code, error: e.message };
  return { outcome: "INTERNAL_SERVER_ERROR", error: "Internal server error" };
}

export const AuditTrail: MiddlewareFn<Context> = async ({ context, info, args }, next) => {
  if (info.parentType.name !== "Mutation" || !context.services.audit.enabled) return next();
  const action = info.fieldName;
  const subject = AUDIT_SUBJECTS[action];
  const at = new Date(context.lookups.now());
  // Read as the caller: a document they may not see (or none) is simply not recorded.
  const before = subject ? await subject.read(context, args).catch(() => undefined) : undefined;
  const audit = context.services.audit;
  let intentId: string | null = null;
  try {
    intentId = await audit.begin({ at, action, actor: actorOf(context, null), address: context.clientAddress, targetIds: targetIdsOf(args, null), args });
  } catch (e) {
    // The call goes on: its entry is still written at its end (under the intent's id), only a crash before then would lose it.
    if (e instanceof AuditIntentError) intentId = e.id;
    context.log.error({ err: e, action }, "audit intent not written");
  }
  let result: unknown;
  let failure: unknown = null;
  let failed = false;
  try {
    result = await next();
  } catch (e) {
    failure = e;
    failed = true;
  }
  const refusal = failed ? outcomeOf(failure) : null;
  try {
    await audit.record({
      at,
      action,
      actor: actorOf(context, failed ? null : result),
      address: context.clientAddress,
      targetIds: targetIdsOf(args, failed ? null : result),
      outcome: refusal?.outcome ?? "OK",
      error: refusal?.error ?? null,
      args,
      // A refused call changed nothing, and its caller may not read what the reader found.
      before: failed ? undefined : subject ? before : null,
      after: failed ? undefined : subject?.deletes ? null : isObject(result) || Array.isArray(result) ? result : undefined,
    }, intentId);
  } catch (e) {
    context.log.error({ err: e, action }, "audit entry not written");
  }
  if (failed) throw failure;
  return result;
};
