/** What the API role guards itself with; src/config/api.ts reads them from the environment. */
import type { RateLimitSettings } from "../auth/index.js";

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

/** The API role's guards: query limits, rate limits, login protection, body size, trusted proxies (docs/limits.md). */
export interface ApiGuardSettings extends RateLimitSettings {
  query: QueryLimitSettings;
  /** Largest request body in bytes. `KAIROS_MAX_BODY_BYTES`. @default 1048576 (1 MiB) */
  maxBodyBytes: number;
  /** Proxy hops in front of the API whose X-Forwarded-For is trusted for the client address. `KAIROS_TRUST_PROXY`. @default 0 */
  trustProxyHops: number;
}
