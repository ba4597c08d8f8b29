/**
 * Rate limits and login protection on rate-limiter-flexible. With Redis (every deployment that has
 * REDIS_URL) the counters live there, so all API instances share them; without it (`dev`) they live
 * in this process. Over a limit a call fails with RateLimitedError, which the GraphQL layer answers
 * as RATE_LIMITED with `retryAfterSeconds` (and HTTP 429 with Retry-After where the whole request is
 * refused: src/api/errors-http.ts).
 *
 * Login protection counts failed logins per user name and per client address. After
 * `freeFailures` failures each further attempt must wait, 1 × delay, then 2 ×, 4 × … (capped at
 * the lockout); at `lockoutAfter` failures the name (or address) is locked out for the lockout
 * time, unless an administrator lifts it first (`unlockLogin`). An attempt made while it must wait
 * is refused without checking the password and does not count as a failure. A successful login
 * clears its user name's failures; an address's failures only age out (a credential-stuffing
 * client cannot reset them with one account it owns). rate-limiter-flexible cannot list its keys, so
 * each tracker also records the waits it imposes (a Redis sorted set `<prefix>:rl:login-locked:user`
 * or `:address`, scored by when the wait ends; a Map without Redis; login-lockouts.ts):
 * `LoginGuard.page` answers the admin query `loginLockouts`.
 */
import type { RedisClient } from "../shared-state/index.js";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { RateLimitedError, retryAfterSeconds, UnauthenticatedError } from "../domain/index.js";
import type { Page, PageQuery } from "../store/index.js";
import { BlockedList, lockoutAfter, lockoutPage, type LoginLockout } from "./login-lockouts.js";

/** A budget of `points` per `durationMs`, or null for no limit (`off`). */
export interface Rate {
  points: number;
  durationMs: number;
}

/** Login protection: per user name and per client address (below). */
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

/** The API's rate limits (set by KAIROS_RATE_* and KAIROS_LOGIN_*; src/config/api.ts reads them). */
export interface RateLimitSettings {
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
}

/** Where the counters live: Redis (shared by every instance) or, with `redis: null`, this process. */
export interface LimiterStore {
  redis: RedisClient | null;
  /** Key prefix, e.g. the deployment's KAIROS_REDIS_PREFIX. */
  prefix: string;
}

/** Longest user name kept as a key; longer ones cannot exist (usernames are 3–64 characters). */
const MAX_KEY = 64;

/** rate-limiter-flexible counts in whole seconds; 0 would mean "forever", so at least 1. */
const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

function limiter(store: LimiterStore, name: string, points: number, durationMs: number): RateLimiterAbstract {
  const opts = { keyPrefix: `${store.prefix}:rl:${name}`, points, duration: seconds(durationMs) };
  if (!store.redis) return new RateLimiterMemory(opts);
  return new RateLimiterRedis({
    ...opts,
    storeClient: store.redis,
    // Redis unreachable: keep limiting per instance instead of waiting on it or not limiting at all.
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory(opts),
  });
}

/** An ISO-8601 rendering of a setting's duration for messages: PT1M, PT1H, PT90S. */
export function isoDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return `PT${ms / 3_600_000}H`;
  if (ms % 60_000 === 0) return `PT${ms / 60_000}M`;
  return `PT${Math.ceil(ms / 1000)}S`;
}

/** A budget of `rate.points` calls per window, per key; `null` rate = unlimited. */
export class RateBudget {
  private readonly limiter: RateLimiterAbstract | null;

  constructor(
    store: LimiterStore,
    /** `requests` or `submissions`: the `extensions.limit` of a refusal. */
    readonly name: string,
    private readonly rate: Rate | null,
  ) {
    this.limiter = rate ? limiter(store, name, rate.points, rate.durationMs) : null;
  }

  /**
   * Charges `points` more to `key` without refusing anything now (a refused document's penalty):
   * the caller's next requests meet the spent budget.
   */
  async charge(key: string, points: number): Promise<void> {
    if (!this.limiter || points <= 0) return;
    try {
      await this.limiter.penalty(key, points);
    } catch {
      // a store error must not turn a refusal into a 500
    }
  }

  /**
   * Whether `key`'s budget is spent now, without taking anything from it: when it refills and what
   * the budget is, or null when it is not spent (or there is no limit, or the store cannot say).
   */
  async spentUntil(key: string, now: number): Promise<{ until: Date; points: number; durationMs: number } | null> {
    if (!this.limiter || !this.rate) return null;
    try {
      const res = await this.limiter.get(key);
      if (!res || res.consumedPoints < this.rate.points) return null;
      return { until: new Date(now + res.msBeforeNext), points: this.rate.points, durationMs: this.rate.durationMs };
    } catch {
      return null;
    }
  }

  /**
   * Takes `count` points for `key` (one call; a DAG run counts one per task), at most a whole
   * window's budget, so a call worth more than the budget can still be made once a window. Throws
   * RateLimitedError when the window's budget cannot cover them; `why` says what the count is.
   */
  async take(key: string, who: string, count = 1, why = ""): Promise<void> {
    if (!this.limiter || !this.rate) return;
    try {
      await this.limiter.consume(key, Math.max(1, Math.min(count, this.rate.points)));
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      const { points, durationMs } = this.rate;
      throw new RateLimitedError(
        this.name,
        e.msBeforeNext,
        `too many ${this.name} for ${who}: at most ${points} per ${isoDuration(durationMs)}${why}; retry in ${retryAfterSeconds(e.msBeforeNext)} s`,
      );
    }
  }
}

interface FailureCurve {
  freeFailures: number;
  lockoutAfter: number;
}

/** Failed logins along one dimension (user name or client address) and the wait they impose. */
class FailureTracker {
  private readonly failures: RateLimiterAbstract;
  /** A key blocked here must wait (growing delay or lockout) until its block expires. */
  private readonly wait: RateLimiterAbstract;
  /** Which keys must wait, and until when (login-lockouts.ts): rate-limiter-flexible cannot list its keys. */
  readonly blocked: BlockedList;

  constructor(
    store: LimiterStore,
    readonly dimension: "user" | "address",
    private readonly curve: FailureCurve,
    private readonly settings: LoginLimitSettings,
  ) {
    this.failures = limiter(store, `login-failures-${dimension}`, curve.lockoutAfter, settings.windowMs);
    this.wait = limiter(store, `login-wait-${dimension}`, 1, settings.lockoutMs);
    this.blocked = new BlockedList(store.redis, dimension, `${store.prefix}:rl:login-locked:${dimension}`, settings.lockoutMs);
  }

  /** How long `key` must still wait, and whether that is a lockout; null when it may try now. */
  async waiting(key: string): Promise<{ ms: number; lockedOut: boolean } | null> {
    const [wait, failures] = await Promise.all([this.wait.get(key), this.failures.get(key)]);
    if (!wait || wait.consumedPoints <= 1 || wait.msBeforeNext <= 0) return null;
    return { ms: wait.msBeforeNext, lockedOut: (failures?.consumedPoints ?? 0) >= this.curve.lockoutAfter };
  }

  /** Counts a failure and imposes the wait it earns. */
  async failed(key: string): Promise<void> {
    const n = (await this.failures.penalty(key, 1)).consumedPoints;
    let ms = 0;
    if (n >= this.curve.lockoutAfter) {
      ms = seconds(this.settings.lockoutMs) * 1000;
    } else if (n >= this.curve.freeFailures) {
      ms = seconds(Math.min(this.settings.delayMs * 2 ** (n - this.curve.freeFailures), this.settings.lockoutMs)) * 1000;
    }
    if (ms === 0) return;
    await this.wait.block(key, ms / 1000);
    await this.blocked.add(key, Date.now() + ms).catch(() => undefined); // the list is advisory; the block holds
  }

  /** Forgets `key`'s failures and lifts its wait; true when there was something to lift. */
  async clear(key: string): Promise<boolean> {
    const [a, b] = await Promise.all([this.failures.delete(key), this.wait.delete(key), this.blocked.remove(key).catch(() => undefined)]);
    return a || b;
  }

  /** Failed logins of `key` counted in the window, when known. */
  async failuresOf(key: string): Promise<number | null> {
    const failures = await this.failures.get(key).catch(() => null);
    return failures ? failures.consumedPoints : null;
  }
}

export class LoginGuard {
  private readonly user: FailureTracker;
  private readonly address: FailureTracker;

  constructor(store: LimiterStore, settings: LoginLimitSettings) {
    this.user = new FailureTracker(store, "user", settings, settings);
    this.address = new FailureTracker(store, "address", { freeFailures: settings.addressFreeFailures, lockoutAfter: settings.addressLockoutAfter }, settings);
  }

  /**
   * Runs `login` unless the user name or the address must wait; counts an UnauthenticatedError
   * from it as a failed attempt and a success as clearing the user name's failures.
   */
  async attempt<T>(username: string, address: string, login: () => Promise<T>): Promise<T> {
    const name = username.slice(0, MAX_KEY);
    await this.refuseIfWaiting(name, address);
    try {
      const result = await login();
      await this.user.clear(name);
      return result;
    } catch (e) {
      if (e instanceof UnauthenticatedError) await Promise.all([this.user.failed(name), this.address.failed(address)]);
      throw e;
    }
  }

  private async refuseIfWaiting(name: string, address: string): Promise<void> {
    const [byUser, byAddress] = await Promise.all([this.user.waiting(name), this.address.waiting(address)]);
    const wait = byUser ?? byAddress;
    if (!wait) return;
    const who = byUser ? `user "${name}"` : "this client address";
    const s = retryAfterSeconds(wait.ms);
    throw new RateLimitedError(
      "login",
      wait.ms,
      wait.lockedOut
        ? `login for ${who} is locked out after too many failed attempts; retry in ${s} s or ask an administrator to lift it (unlockLogin)`
        : `too many failed logins for ${who}; wait ${s} s before the next attempt`,
    );
  }

  /** Lifts the lockout or wait of a user name and/or a client address; true when one was there. */
  async unlock(target: { username?: string | null; address?: string | null }): Promise<boolean> {
    const lifted = await Promise.all([
      target.username ? this.user.clear(target.username.slice(0, MAX_KEY)) : false,
      target.address ? this.address.clear(target.address) : false,
    ]);
    return lifted.some(Boolean);
  }

  /**
   * A page of the current waits and lockouts of user names and client addresses, latest-ending
   * first (then user names before addresses, then by key), after the entry the cursor names.
   */
  async page(page: PageQuery): Promise<Page<LoginLockout>> {
    const after = lockoutAfter(page.after);
    const trackers = [this.user, this.address];
    const waits = await Promise.all(trackers.map(async (t) => (await t.blocked.list({ size: page.size + 1, after })).map((w) => ({ ...w, dimension: t.dimension, tracker: t }))));
    const shown = lockoutPage(waits.flat(), page.size);
    const edges = await Promise.all(
      shown.edges.map(async ({ cursor, node: w }) => ({ cursor, node: { dimension: w.dimension, key: w.key, until: new Date(w.until), failures: await w.tracker.failuresOf(w.key) } })),
    );
    return { edges, pageInfo: shown.pageInfo };
  }
}

/** Whose budget a call spends: the user's when logged in, else the client address's. */
export function budgetKey(principal: { userId: string; username: string } | null, address: string): { key: string; who: string } {
  return principal ? { key: userBudgetKey(principal.userId), who: `user ${principal.username}` } : { key: `addr:${address}`, who: `address ${address}` };
}

/** A user's key in the budgets (what work done on the user's behalf outside a request is charged to). */
export function userBudgetKey(userId: string): string {
  return `user:${userId}`;
}

/** Every rate limit of the API, built once per process. */
export interface RateLimits {
  /** HTTP requests and WebSocket operations, per user (per client address when anonymous). */
  requests: RateBudget;
  /** createJob, triggerJob, backfillJob, createDag, backfillDag (one each) and triggerDag (one per task of the DAG), per user. */
  submissions: RateBudget;
  login: LoginGuard;
  /** What a refused document costs of the request budget (KAIROS_RATE_REFUSED_COST). */
  refusedCost: number;
}

export function createRateLimits(settings: RateLimitSettings, store: LimiterStore): RateLimits {
  return {
    refusedCost: settings.refusedCost,
    requests: new RateBudget(store, "requests", settings.requestRate),
    submissions: new RateBudget(store, "submissions", settings.submissionRate),
    login: new LoginGuard(store, settings.login),
  };
}
