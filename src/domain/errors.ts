/**
 * Domain errors. They carry ids and say what was wrong and what is allowed; the GraphQL layer
 * (`src/resolvers/errors.ts`) is the only place that turns them into wire shapes.
 */
export class KairosError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A caller-supplied value is invalid. `field` is the input path, e.g. `schedule.cron`. */
export class ValidationError extends KairosError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

export class NotFoundError extends KairosError {
  constructor(
    readonly entity: string,
    readonly id: string,
  ) {
    super(`${entity} ${id} not found`);
  }
}

/**
 * Another user's object, refused. Answered exactly like a missing one (same code, same message),
 * so ids of other users' objects cannot be probed; unlike a missing one it is logged as a refused
 * cross-tenant attempt.
 */
export class NotYoursError extends NotFoundError {}

export class UnauthenticatedError extends KairosError {}

/** The caller may not do this at all (an admin-only operation, a read-only API key). Logged as a refused attempt. */
export class ForbiddenError extends KairosError {
  constructor(
    message: string,
    /** The object the refused operation was aimed at, for the log. */
    readonly targetId: string | null = null,
  ) {
    super(message);
  }
}

/**
 * The operation conflicts with the current state. Never thrown as such: each subclass says what a
 * client should do, and has its own `extensions.code` (docs/api-errors.md). Catch this one where
 * any of the three means the same to the caller.
 */
export abstract class ConflictError extends KairosError {}

/**
 * The caller lost a race: something changed between its read and its write, a lock was too
 * contended, the same idempotent request is still in progress. Retrying the same call can succeed.
 * `extensions.code = ABORTED`.
 */
export class ConcurrentChangeError extends ConflictError {}

/**
 * The state forbids it: a run in the wrong status, a paused job, a name already taken, an overlap
 * policy holding the slot, a deleted owner. Retrying unchanged fails again: change the request or
 * the state first. `extensions.code = FAILED_PRECONDITION`.
 */
export class PreconditionError extends ConflictError {}

/**
 * A per-user bound is reached (API keys, open subscriptions, pending uploads, runs waiting to
 * start): the call succeeds once some are freed. `extensions.code = RESOURCE_EXHAUSTED`.
 */
export class LimitReachedError extends ConflictError {}

/** A state transition that the run lifecycle table does not allow. */
export class InvalidTransitionError extends PreconditionError {
  constructor(
    readonly runId: string,
    readonly from: string,
    readonly to: string,
  ) {
    super(`run ${runId} cannot go from ${from} to ${to}`);
  }
}

/**
 * A rate limit or login protection refused the call. `limit` names it (`requests`,
 * `submissions`, `login`); `retryAfterMs` says when the same call can succeed.
 */
export class RateLimitedError extends KairosError {
  constructor(
    readonly limit: string,
    readonly retryAfterMs: number,
    message: string,
  ) {
    super(message);
  }

  /** What `Retry-After` and `extensions.retryAfterSeconds` carry. */
  get retryAfterSeconds(): number {
    return retryAfterSeconds(this.retryAfterMs);
  }
}

/** A wait in whole seconds, at least 1 (a client told "0" would retry at once and be refused again). */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** Configuration is invalid; the message names the setting. Fatal at start-up. */
export class ConfigError extends KairosError {}

/** Turns whatever was thrown into an Error (a string, an object, undefined ...). */
export function coerceError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  return new Error(typeof thrown === "string" ? thrown : "non-Error thrown", { cause: thrown });
}
