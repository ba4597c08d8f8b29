/**
 * The one place that knows GraphQL error shapes: domain errors become errors with
 * `extensions.code`; anything unexpected is logged and masked as INTERNAL_SERVER_ERROR, so no
 * driver message or stack trace reaches a client.
 */
import { GraphQLError } from "graphql";
import type { MiddlewareFn } from "type-graphql";
import {
  ConcurrentChangeError,
  ConflictError,
  ForbiddenError,
  LimitReachedError,
  NotFoundError,
  NotYoursError,
  RateLimitedError,
  UnauthenticatedError,
  ValidationError,
} from "../domain/index.js";
import { ScheduleError } from "../timing/index.js";
import type { Context } from "./context.js";

/**
 * Every `extensions.code` the API gives a refused or failed call (docs/api-errors.md): what
 * toGraphQLError makes of the domain's errors, and the mask of anything unexpected.
 */
export const API_ERROR_CODES = [
  "UNAUTHENTICATED",
  "FORBIDDEN",
  "BAD_USER_INPUT",
  "NOT_FOUND",
  "ABORTED",
  "FAILED_PRECONDITION",
  "RESOURCE_EXHAUSTED",
  "RATE_LIMITED",
  "INTERNAL_SERVER_ERROR",
] as const;

export function toGraphQLError(e: unknown): GraphQLError | null {
  if (e instanceof GraphQLError) return e;
  if (e instanceof ValidationError) return new GraphQLError(e.message, { extensions: { code: "BAD_USER_INPUT", field: e.field } });
  if (e instanceof ScheduleError) return new GraphQLError(e.message, { extensions: { code: "BAD_USER_INPUT", field: e.field } });
  if (e instanceof NotFoundError) return new GraphQLError(e.message, { extensions: { code: "NOT_FOUND", entity: e.entity, id: e.id } });
  if (e instanceof UnauthenticatedError) return new GraphQLError(e.message, { extensions: { code: "UNAUTHENTICATED" } });
  if (e instanceof ForbiddenError) return new GraphQLError(e.message, { extensions: { code: "FORBIDDEN" } });
  if (e instanceof ConflictError) return new GraphQLError(e.message, { extensions: { code: conflictCode(e) } });
  if (e instanceof RateLimitedError) {
    return new GraphQLError(e.message, { extensions: { code: "RATE_LIMITED", limit: e.limit, retryAfterSeconds: e.retryAfterSeconds } });
  }
  return null;
}

/** What a client should do decides the code: retry (ABORTED), change the request (FAILED_PRECONDITION), wait (RESOURCE_EXHAUSTED). */
function conflictCode(e: ConflictError): "ABORTED" | "FAILED_PRECONDITION" | "RESOURCE_EXHAUSTED" {
  if (e instanceof ConcurrentChangeError) return "ABORTED";
  if (e instanceof LimitReachedError) return "RESOURCE_EXHAUSTED";
  return "FAILED_PRECONDITION";
}

const ID_ARGS = ["id", "userId", "jobId", "runId"] as const;

/**
 * Logs a refused cross-tenant or privileged attempt at `warn`: who, which operation, which object.
 * Only ids are logged, never other arguments (passwords, keys, job specs).
 */
export function logRefusal(context: Context, operation: string, e: unknown, args: Record<string, unknown> = {}): void {
  if (!(e instanceof NotYoursError) && !(e instanceof ForbiddenError)) return;
  const argId = ID_ARGS.map((k) => args[k]).find((v): v is string => typeof v === "string") ?? null;
  const p = context.principal;
  context.log.warn(
    {
      userId: p?.userId ?? null,
      username: p?.username ?? null,
      via: p ? (p.credential.kind === "apiKey" ? `apiKey:${p.credential.keyId}` : "token") : null,
      operation,
      targetId: e instanceof NotYoursError ? e.id : (e.targetId ?? argId),
      ...(e instanceof NotYoursError ? { entity: e.entity } : {}),
    },
    e instanceof NotYoursError ? "refused: another user's object" : `refused: ${e.message}`,
  );
}

/** Global resolver middleware: translate domain errors at the boundary. */
export const ErrorTranslator: MiddlewareFn<Context> = async ({ context, info, args }, next) => {
  try {
    return await next();
  } catch (e) {
    logRefusal(context, `${info.parentType.name}.${info.fieldName}`, e, args);
    const mapped = toGraphQLError(e);
    if (mapped) throw mapped;
    context.log.error({ err: e, field: `${info.parentType.name}.${info.fieldName}` }, "resolver failed");
    throw new GraphQLError("Internal server error", { extensions: { code: "INTERNAL_SERVER_ERROR" } });
  }
};

/** Read-only API keys may read and subscribe; every mutation is refused, in this one place. */
export const ReadOnlyGuard: MiddlewareFn<Context> = async ({ context, info }, next) => {
  if (info.parentType.name === "Mutation" && context.principal?.scope === "READ_ONLY") {
    throw new ForbiddenError(`this API key is read-only (scope READ_ONLY): ${info.fieldName} needs a READ_WRITE key`);
  }
  return next();
};
