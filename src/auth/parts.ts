/** Authentication's parts, built together: account cache, API keys, the authenticator, the watch over open connections. */
import type { Logger } from "../support/index.js";
import type { Clock } from "../shared-state/index.js";
import type { Mongo } from "../store/index.js";
import { AccountCache, DEFAULT_ACCOUNT_CACHE_MS } from "./accounts.js";
import { ApiKeyService } from "./api-keys.js";
import { Authenticator } from "./authenticator.js";
import { SessionWatch } from "./session-watch.js";
import type { TokenService } from "./tokens.js";

export interface AuthParts {
  accounts: AccountCache;
  apiKeys: ApiKeyService;
  auth: Authenticator;
  sessions: SessionWatch;
}

export function createAuth(deps: {
  mongo: Mongo;
  tokens: TokenService;
  clock: Clock;
  log: Logger;
  /** How long account facts and keys are reused. @default 2 s */
  cacheMs?: number;
  /** How often open WebSocket connections are re-checked. @default 1 s */
  recheckMs?: number;
}): AuthParts {
  const cacheMs = deps.cacheMs ?? DEFAULT_ACCOUNT_CACHE_MS;
  const log = deps.log.child({ component: "auth" });
  const accounts = new AccountCache({ mongo: deps.mongo, clock: deps.clock, ttlMs: cacheMs });
  const apiKeys = new ApiKeyService({ mongo: deps.mongo, clock: deps.clock, log, cacheMs });
  const auth = new Authenticator({ tokens: deps.tokens, accounts, apiKeys, clock: deps.clock });
  const sessions = new SessionWatch({ auth, log, everyMs: deps.recheckMs });
  return { accounts, apiKeys, auth, sessions };
}
