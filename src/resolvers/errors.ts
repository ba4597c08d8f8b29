/**
 * The one place that knows GraphQL error shapes: domain errors become errors with
 * `extensions.code`; anything unexpected is logged and masked as INTERNAL_SERVER_ERROR, so no
 * driver message or stack trace reaches a client.
 */
import { GraphQLError } from "graphql";
import type { MiddlewareFn } from "type-graphql";
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  RateLimitedError,
  UnauthenticatedError,
  ValidationError,
} from "../errors.js";
import { ScheduleError } from "../scheduler/timing/index.js";
import type { Context } from "./context.js";

export function toGraphQLError(e: unknown): GraphQLError | null {
  if (e instanceof GraphQLError) return e;
  if (e instanceof ValidationError) return new GraphQLError(e.message, { extensions: { code: "BAD_USER_INPUT", field: e.field } });
  if (e instanceof ScheduleError) return new GraphQLError(e.message, { extensions: { code: "BAD_USER_INPUT", field: e.field } });
  if (e instanceof NotFoundError) return new GraphQLError(e.message, { extensions: { code: "NOT_FOUND", entity: e.entity, id: e.id } });
  if (e instanceof UnauthenticatedError) return new GraphQLError(e.message, { extensions: { code: "UNAUTHENTICATED" } });
  if (e instanceof ForbiddenError) return new GraphQLError(e.message, { extensions: { code: "FORBIDDEN" } });
  if (e instanceof ConflictError) return new GraphQLError(e.message, { extensions: { code: "CONFLICT" } });
  if (e instanceof RateLimitedError) {
    return new GraphQLError(e.message, { extensions: { code: "RATE_LIMITED", limit: e.limit, retryAfterSeconds: e.retryAfterSeconds } });
  }
  return null;
}

/** Global resolver middleware: translate domain errors at the boundary. */
export const ErrorTranslator: MiddlewareFn<Context> = async ({ context, info }, next) => {
  try {
    return await next();
  } catch (e) {
    const mapped = toGraphQLError(e);
    if (mapped) throw mapped;
    context.log.error({ err: e, field: `${info.parentType.name}.${info.fieldName}` }, "resolver failed");
    throw new GraphQLError("Internal server error", { extensions: { code: "INTERNAL_SERVER_ERROR" } });
  }
};
