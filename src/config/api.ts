/** The API role's guards: query limits, request rate limits and login protection (docs/limits.md). */
import { ConfigError } from "../domain/index.js";
import type { ApiGuardSettings } from "../api/index.js";
import type { LoginLimitSettings } from "../auth/index.js";
import { bool, int, rate, settingDuration, type Env } from "./parse.js";

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
    maxBodyBytes: int("KAIROS_MAX_BODY_BYTES", env.KAIROS_MAX_BODY_BYTES, 2_097_152, 1_024, 100 * 1_048_576),
    trustProxyHops: int("KAIROS_TRUST_PROXY", env.KAIROS_TRUST_PROXY, 0, 0, 10),
  };
}
