/**
 * The account facts every request depends on (exists, enabled, current token version, role),
 * read from MongoDB at most once per `ttlMs` per user and API instance: checking them costs
 * nothing per request. A change made through this instance is seen at once (`invalidate`); one
 * made through another instance within `ttlMs`.
 */
import type { Clock } from "../shared-state/index.js";
import type { Mongo } from "../store/index.js";
import { findAccountFacts } from "../store/index.js";
import type { UserDoc, UserRole } from "../domain/index.js";

export interface Account {
  userId: string;
  username: string;
  role: UserRole;
  tokenVersion: number;
  disabled: boolean;
}

/** How long account facts are reused. @default 2 s */
export const DEFAULT_ACCOUNT_CACHE_MS = 2_000;

export function toAccount(u: UserDoc): Account | null {
  // A user whose deletion has started is gone for authentication.
  if (u.deletedAt) return null;
  return { userId: u._id, username: u.username, role: u.role, tokenVersion: u.tokenVersion ?? 0, disabled: u.disabled === true };
}

export class AccountCache {
  private readonly entries = new Map<string, { at: number; account: Promise<Account | null> }>();

  constructor(private readonly deps: { mongo: Mongo; clock: Clock; ttlMs?: number }) {}

  /** The account, or null when the user does not exist (never did, or was deleted). */
  get(userId: string): Promise<Account | null> {
    const now = this.deps.clock();
    const hit = this.entries.get(userId);
    if (hit && now - hit.at < (this.deps.ttlMs ?? DEFAULT_ACCOUNT_CACHE_MS)) return hit.account;
    const account = findAccountFacts(this.deps.mongo, userId).then((u) => (u ? toAccount(u) : null));
    // A failed read is not cached: the next request asks again.
    account.catch(() => this.entries.delete(userId));
    if (this.entries.size > 100_000) this.entries.clear();
    this.entries.set(userId, { at: now, account });
    return account;
  }

  invalidate(userId: string): void {
    this.entries.delete(userId);
  }
}
