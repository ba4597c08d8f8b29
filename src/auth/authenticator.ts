/**
 * Turns a presented credential (a JWT or an API key) into the caller, and says whether a caller
 * established earlier is still valid: the token or key has not expired or been revoked, and its
 * user still exists and is enabled. Both transports use it: HTTP on every request, WebSocket on
 * every subscription and periodically for open connections (SessionWatch). Account facts and keys
 * are cached briefly (AccountCache, ApiKeyService), so a check costs no query per request.
 */
import { UnauthenticatedError } from "../domain/index.js";
import type { Clock } from "../shared-state/index.js";
import type { ApiKeyScope } from "../domain/index.js";
import type { Account, AccountCache } from "./accounts.js";
import { hashApiKey, isApiKey, type ApiKeyService } from "./api-keys.js";
import { bearer, type Principal, type TokenClaims, type TokenService } from "./tokens.js";

export type Credential =
  | { kind: "token"; claims: TokenClaims }
  | { kind: "apiKey"; keyId: string | null; hash: string };

/** An authenticated caller: who (the user's current role), what they may do (scope), and by which credential. */
export interface Caller extends Principal {
  /** READ_ONLY only for read-only API keys: every mutation is refused. */
  scope: ApiKeyScope;
  credential: Credential;
}

export class Authenticator {
  constructor(private readonly deps: { tokens: TokenService; accounts: AccountCache; apiKeys: ApiKeyService; clock: Clock }) {}

  /** The caller for an `Authorization` value (`Bearer <token or key>`); throws UnauthenticatedError. */
  fromHeader(header: string): Promise<Caller> {
    const secret = bearer(header);
    return this.resolve(isApiKey(secret) ? { kind: "apiKey", keyId: null, hash: hashApiKey(secret) } : { kind: "token", claims: this.deps.tokens.verify(secret) });
  }

  /** Null while the caller's credential is still good, else why it no longer is. */
  async invalidReason(caller: Caller): Promise<string | null> {
    try {
      await this.resolve(caller.credential);
      return null;
    } catch (e) {
      if (e instanceof UnauthenticatedError) return e.message;
      throw e;
    }
  }

  private async resolve(credential: Credential): Promise<Caller> {
    return credential.kind === "token" ? this.resolveToken(credential) : this.resolveKey(credential);
  }

  private async resolveToken(credential: Extract<Credential, { kind: "token" }>): Promise<Caller> {
    const { claims } = credential;
    if (claims.expiresAt <= this.deps.clock()) throw new UnauthenticatedError("token expired; log in again");
    const account = usable(await this.deps.accounts.get(claims.userId), "the token's user");
    if (claims.tokenVersion !== account.tokenVersion) throw new UnauthenticatedError("token revoked; log in again");
    return { userId: account.userId, username: account.username, role: account.role, scope: "READ_WRITE", credential };
  }

  private async resolveKey(credential: Extract<Credential, { kind: "apiKey" }>): Promise<Caller> {
    const key = await this.deps.apiKeys.lookup(credential.hash);
    if (!key) throw new UnauthenticatedError("invalid API key");
    if (key.revokedAt) throw new UnauthenticatedError(`API key ${key.prefix}… was revoked`);
    if (key.expiresAt && key.expiresAt.getTime() <= this.deps.clock()) throw new UnauthenticatedError(`API key ${key.prefix}… expired at ${key.expiresAt.toISOString()}`);
    const account = usable(await this.deps.accounts.get(key.ownerId), "the API key's owner");
    this.deps.apiKeys.touch(key);
    return { userId: account.userId, username: account.username, role: account.role, scope: key.scope, credential: { ...credential, keyId: key._id } };
  }
}

function usable(account: Account | null, whose: string): Account {
  if (!account) throw new UnauthenticatedError(`${whose} does not exist (deleted?)`);
  if (account.disabled) throw new UnauthenticatedError(`${whose} account is disabled; ask an administrator`);
  return account;
}
