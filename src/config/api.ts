/** The API role's guards: query limits, request rate limits and login protection (README "Limits"). */
import { ConfigError } from "../domain/errors.js";
import { bool, int, rate, settingDuration, type Env, type Rate } from "./parse.js";

/** Limits a GraphQL operation must pass before any resolver runs (src/api/limits.ts). */
export interface QueryLimitSettings {
  /** Deepest field nesting of an operation. `KAIROS_MAX_DEPTH`. @default 10 */
  maxDepth: number;
  /** Aliased fields in an operation. `KAIROS_MAX_ALIASES`. @default 20 */
  maxAliases: number;
  /** Lexical tokens of a document (checked while parsing). `KAIROS_MAX_TOKENS`. @default 1000 */
  maxTokens: number;
  /** Directives in an operation. `KAIROS_MAX_DIRECTIVES`. @default 20 */
  maxDirectives: number;
  /** Cost of a query or mutation (cost model: src/api/cost.ts). `KAIROS_MAX_COST`. @default 10000 */
  maxCost: number;
  /** Cost of a subscription, paid again for every event. `KAIROS_MAX_SUBSCRIPTION_COST`. @default 1000 */
  maxSubscriptionCost: number;
  /** Schema introspection. `KAIROS_INTROSPECTION`. @default true in dev, false otherwise */
  introspection: boolean;
  /** "Did you mean …" in validation errors. `KAIROS_FIELD_SUGGESTIONS`. @default true in dev, false otherwise */
  fieldSuggestions: boolean;
}

/** Login protection: per user name and per client address (src/api/rate-limit.ts). */
export interface LoginLimitSettings {
  /** Failed logins of one user name before each further one must wait. `KAIROS_LOGIN_FREE_FAILURES`. @default 3 */
  freeFailures: number;
  /** Failed logins of one user name that lock it out. `KAIROS_LOGIN_LOCKOUT_AFTER`. @default 10 */
  lockoutAfter: number;
  /** As freeFailures, per client address. `KAIROS_LOGIN_ADDRESS_FREE_FAILURES`. @default 10 */
  addressFreeFailures: number;
  /** As lockoutAfter, per client address. `KAIROS_LOGIN_ADDRESS_LOCKOUT_AFTER`. @default 100 */
  addressLockoutAfter: number;
  /** The first wait; it doubles with each further failure. `KAIROS_LOGIN_DELAY`. @default PT1S */
  delayMs: number;
  /** How long a lockout lasts unless an admin lifts it (unlockLogin). `KAIROS_LOGIN_LOCKOUT`. @default PT15M */
  lockoutMs: number;
  /** Failures older than this are forgotten. `KAIROS_LOGIN_WINDOW`. @default PT1H */
  windowMs: number;
}

export interface ApiGuardSettings {
  query: QueryLimitSettings;
  /** Requests (HTTP) or operations (WebSocket) per user, or per address when anonymous. `KAIROS_RATE_REQUESTS`. @default 1200/PT1M */
  requestRate: Rate | null;
  /**
   * What a document refused by the query limits (or unparsable, or invalid) costs of the caller's
   * request budget, in requests: an abusive client is soon answered with cheap 429s.
   * `KAIROS_RATE_REFUSED_COST`. @default 20
   */
  refusedCost: number;
  /** createJob, triggerJob and backfillJob calls per user. `KAIROS_RATE_SUBMISSIONS`. @default 120/PT1M */
  submissionRate: Rate | null;
  login: LoginLimitSettings;
  /** Largest request body in bytes. `KAIROS_MAX_BODY_BYTES`. @default 1048576 (1 MiB) */
  maxBodyBytes: number;
  /** Proxy hops in front of the API whose X-Forwarded-For is trusted for the client address. `KAIROS_TRUST_PROXY`. @default 0 */
  trustProxyHops: number;
}

export function apiGuard(env: Env, dev: boolean): ApiGuardSettings {
  const login: LoginLimitSettings = {
    freeFailures: int("KAIROS_LOGIN_FREE_FAILURES", env.KAIROS_LOGIN_FREE_FAILURES, 3, 0, 1_000),
    lockoutAfter: int("KAIROS_LOGIN_LOCKOUT_AFTER", env.KAIROS_LOGIN_LOCKOUT_AFTER, 10, 1, 1_000),
    addressFreeFailures: int("KAIROS_LOGIN_ADDRESS_FREE_FAILURES", env.KAIROS_LOGIN_ADDRESS_FREE_FAILURES, 10, 0, 100_000),
    addressLockoutAfter: int("KAIROS_LOGIN_ADDRESS_LOCKOUT_AFTER", env.KAIROS_LOGIN_ADDRESS_LOCKOUT_AFTER, 100, 1, 100_000),
    delayMs: settingDuration("KAIROS_LOGIN_DELAY", env.KAIROS_LOGIN_DELAY ?? "PT1S"),
    lockoutMs: settingDuration("KAIROS_LOGIN_LOCKOUT", env.KAIROS_LOGIN_LOCKOUT ?? "PT15M"),
    windowMs: settingDuration("KAIROS_LOGIN_WINDOW", env.KAIROS_LOGIN_WINDOW ?? "PT1H"),
  };
  if (login.freeFailures >= login.lockoutAfter) {
    throw new ConfigError(`KAIROS_LOGIN_FREE_FAILURES (${login.freeFailures}) must be below KAIROS_LOGIN_LOCKOUT_AFTER (${login.lockoutAfter})`);
  }
  if (login.addressFreeFailures >= login.addressLockoutAfter) {
    throw new ConfigError(
      `KAIROS_LOGIN_ADDRESS_FREE_FAILURES (${login.addressFreeFailures}) must be below KAIROS_LOGIN_ADDRESS_LOCKOUT_AFTER (${login.addressLockoutAfter})`,
    );
  }
  return {
    query: {
      maxDepth: int("KAIROS_MAX_DEPTH", env.KAIROS_MAX_DEPTH, 10, 2, 100),
      maxAliases: int("KAIROS_MAX_ALIASES", env.KAIROS_MAX_ALIASES, 20, 0, 1_000),
      maxTokens: int("KAIROS_MAX_TOKENS", env.KAIROS_MAX_TOKENS, 1_000, 50, 100_000),
      maxDirectives: int("KAIROS_MAX_DIRECTIVES", env.KAIROS_MAX_DIRECTIVES, 20, 0, 1_000),
      maxCost: int("KAIROS_MAX_COST", env.KAIROS_MAX_COST, 10_000, 10, 10_000_000),
      maxSubscriptionCost: int("KAIROS_MAX_SUBSCRIPTION_COST", env.KAIROS_MAX_SUBSCRIPTION_COST, 1_000, 10, 10_000_000),
      introspection: bool("KAIROS_INTROSPECTION", env.KAIROS_INTROSPECTION, dev),
      fieldSuggestions: bool("KAIROS_FIELD_SUGGESTIONS", env.KAIROS_FIELD_SUGGESTIONS, dev),
    },
    requestRate: rate("KAIROS_RATE_REQUESTS", env.KAIROS_RATE_REQUESTS, "1200/PT1M"),
    refusedCost: int("KAIROS_RATE_REFUSED_COST", env.KAIROS_RATE_REFUSED_COST, 20, 1, 10_000),
    submissionRate: rate("KAIROS_RATE_SUBMISSIONS", env.KAIROS_RATE_SUBMISSIONS, "120/PT1M"),
    login,
    maxBodyBytes: int("KAIROS_MAX_BODY_BYTES", env.KAIROS_MAX_BODY_BYTES, 1_048_576, 1_024, 100 * 1_048_576),
    trustProxyHops: int("KAIROS_TRUST_PROXY", env.KAIROS_TRUST_PROXY, 0, 0, 10),
  };
}
