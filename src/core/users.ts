import { ConcurrentChangeError, NotFoundError, PreconditionError, UnauthenticatedError, ValidationError } from "../domain/index.js";
import type { Logger } from "../support/index.js";
import type { AccountCache } from "../auth/index.js";
import type { ApiKeyService } from "../auth/index.js";
import { checkPassword } from "../auth/index.js";
import { generatePassword, hashPassword, verifyPassword } from "../auth/index.js";
import type { Principal, TokenService } from "../auth/index.js";
import { newId, type Mongo, type Page, type PageQuery, type UserListing } from "../store/index.js";
import { deleteOwnerAlertRules, deleteOwnerRecords } from "../store/index.js";
import {
  bumpTokenVersion,
  deleteUser,
  findUser,
  findUserByName,
  findUsersByIds,
  insertUser,
  listLiveUsers,
  markUserDeleted,
  replacePassword,
  resetAdminPassword,
  setUserConcurrencyLimit,
  setUserDisabled,
} from "../store/index.js";
import type { UserDoc, UserRole } from "../domain/index.js";
import type { Clock, SharedState } from "../shared-state/index.js";
import type { JobService, OwnerJobs } from "./jobs/index.js";

const USERNAME_RE = /^[A-Za-z0-9_.@-]{3,64}$/;
/** The start of a user name (users(filter: { usernamePrefix })). */
const USERNAME_PREFIX_RE = /^[A-Za-z0-9_.@-]{1,64}$/;
/** Bounds of a user's `maxConcurrentRuns`. */
export const MAX_CONCURRENT_RUNS_LIMIT = 100_000;

export interface UserServiceDeps {
  mongo: Mongo;
  tokens: TokenService;
  clock: Clock;
  log: Logger;
  /** Where dispatch looks up which owners have a limit (mirrored here on every change). */
  state?: SharedState;
  /** Told of every change to what authentication depends on, so this instance sees it at once. */
  accounts?: AccountCache;
  apiKeys?: ApiKeyService;
  /** Stops or removes a deleted user's jobs. */
  jobs?: JobService;
  /** Deletes a deleted user's artifacts, documents and bytes (core/artifacts). */
  artifacts?: { deleteOwner(ownerId: string): Promise<number> };
  /**
   * Deletes a deleted user's DAGs, their schedules and their DAG runs (running ones cancelled
   * first). src/dag's engine, injected by app/ (core does not import dag/).
   */
  dags?: { deleteOwner(ownerId: string): Promise<{ dags: number; dagRuns: number }> };
}

export interface DeletedUser {
  userId: string;
  jobsKept: number;
  jobsDeleted: number;
  runsCancelled: number;
  apiKeysDeleted: number;
  dagsDeleted: number;
  dagRunsDeleted: number;
}

// Verifying against a dummy hash when the user does not exist keeps the response time the same,
// so login timing does not reveal which user names exist.
let dummyHash: Promise<string> | null = null;

export class UserService {
  constructor(private readonly deps: UserServiceDeps) {}

  async login(username: string, password: string): Promise<{ token: string; expiresAt: Date; user: UserDoc }> {
    const found = await findUserByName(this.deps.mongo, username);
    const user = found?.deletedAt ? null : found;
    dummyHash ??= hashPassword(generatePassword());
    const ok = await verifyPassword(password, user?.passwordHash ?? (await dummyHash));
    if (!user || !ok) throw new UnauthenticatedError("invalid username or password");
    // Said only after the password was right, so it tells a guesser nothing.
    if (user.disabled) throw new UnauthenticatedError("this account is disabled; ask an administrator");
    return { ...this.issue(user), user };
  }

  private issue(user: UserDoc): { token: string; expiresAt: Date } {
    return this.deps.tokens.issue({ ...toPrincipal(user), tokenVersion: user.tokenVersion ?? 0 });
  }

  /**
   * Changes the caller's own password, after checking the current one. Every token issued before
   * is revoked (the token version is bumped); the answer carries a fresh token for this session.
   */
  async changePassword(caller: Principal, current: string, next: string): Promise<{ token: string; expiresAt: Date; user: UserDoc }> {
    const user = await this.live(caller.userId);
    if (!(await verifyPassword(current, user.passwordHash))) throw new ValidationError("currentPassword", "is not your current password");
    checkPassword(next, user.username, "newPassword");
    if (next === current) throw new ValidationError("newPassword", "must differ from the current password");
    const updated = await replacePassword(this.deps.mongo, user._id, user.passwordHash, await hashPassword(next), new Date(this.deps.clock()));
    if (!updated) throw new ConcurrentChangeError("the password was changed meanwhile; log in again");
    this.changed(user._id, "password changed; earlier tokens revoked");
    return { ...this.issue(updated), user: updated };
  }

  /** Revokes every token of the user issued so far (API keys are revoked one by one with revokeApiKey). */
  async revokeTokens(userId: string): Promise<UserDoc> {
    const user = await bumpTokenVersion(this.deps.mongo, userId, new Date(this.deps.clock()));
    if (!user) throw new NotFoundError("user", userId);
    this.changed(userId, "tokens revoked");
    return user;
  }

  /**
   * A disabled user cannot log in, and their tokens and API keys are refused (open subscriptions
   * are closed). Their jobs keep their schedules: disabling locks a person out, it does not stop
   * production work (pause the jobs, or delete the user, for that).
   */
  async setDisabled(caller: Principal, userId: string, disabled: boolean): Promise<UserDoc> {
    if (disabled && userId === caller.userId) throw new PreconditionError("you cannot disable yourself; ask another administrator");
    const user = await setUserDisabled(this.deps.mongo, userId, disabled, new Date(this.deps.clock()));
    if (!user) throw new NotFoundError("user", userId);
    this.changed(userId, disabled ? "user disabled" : "user enabled");
    return user;
  }

  /**
   * Deletes a user. The user is marked deleted first, so from that moment their tokens and keys
   * are refused everywhere; then their DAGs go (schedules first, then the DAGs, their running DAG
   * runs cancelled, then every DAG run document: whatever `jobs` says, as a DAG has no ownerless
   * state), then their jobs are stopped (KEEP: paused and marked as ownerless, DELETE: removed),
   * their open runs cancelled (DAG task runs among them), their API keys, idempotency records and
   * alert rules removed, and last the user document. DAGs go before jobs so that no DAG run is advanced by
   * its task runs' cancellation into starting more tasks. Every step is idempotent: after a crash
   * midway, deleting again finishes the job.
   */
  async delete(caller: Principal, userId: string, jobs: OwnerJobs): Promise<DeletedUser> {
    if (userId === caller.userId) throw new PreconditionError("you cannot delete yourself; ask another administrator");
    const now = new Date(this.deps.clock());
    const marked = await markUserDeleted(this.deps.mongo, userId, now);
    if (!marked) throw new NotFoundError("user", userId);
    if (marked.deletedAt) this.deps.log.info({ userId }, "resuming an unfinished user deletion");
    this.changed(userId, "user deleted");
    const dags = (await this.deps.dags?.deleteOwner(userId)) ?? { dags: 0, dagRuns: 0 };
    const stopped = this.deps.jobs ? await this.deps.jobs.retireOwner(userId, jobs) : { kept: 0, deleted: 0, runsCancelled: 0 };
    const apiKeysDeleted = (await this.deps.apiKeys?.deleteOwner(userId)) ?? 0;
    const artifactsDeleted = (await this.deps.artifacts?.deleteOwner(userId)) ?? 0;
    await deleteOwnerRecords(this.deps.mongo, userId);
    // Their alert rules go with them (and with the rules, their alerts not yet sent).
    await deleteOwnerAlertRules(this.deps.mongo, userId);
    await this.deps.state?.ready.markLimited(userId, false);
    await deleteUser(this.deps.mongo, userId);
    this.deps.log.info({ userId, username: marked.username, by: caller.userId, jobs, ...stopped, apiKeysDeleted, artifactsDeleted, dagsDeleted: dags.dags, dagRunsDeleted: dags.dagRuns }, "user deleted");
    return { userId, jobsKept: stopped.kept, jobsDeleted: stopped.deleted, runsCancelled: stopped.runsCancelled, apiKeysDeleted, dagsDeleted: dags.dags, dagRunsDeleted: dags.dagRuns };
  }

  /** A user that exists and is not being deleted. */
  async live(userId: string): Promise<UserDoc> {
    const user = await findUser(this.deps.mongo, userId);
    if (!user || user.deletedAt) throw new NotFoundError("user", userId);
    return user;
  }

  private changed(userId: string, what: string): void {
    this.deps.accounts?.invalidate(userId);
    this.deps.log.info({ userId }, what);
  }

  async create(username: string, password: string, role: UserRole, maxConcurrentRuns: number | null = null): Promise<UserDoc> {
    if (!USERNAME_RE.test(username)) {
      throw new ValidationError("username", "3–64 characters of letters, digits, '_', '.', '@', '-'");
    }
    checkPassword(password, username);
    checkConcurrencyLimit(maxConcurrentRuns);
    const now = new Date(this.deps.clock());
    const doc: UserDoc = {
      _id: newId(),
      username,
      passwordHash: await hashPassword(password),
      role,
      maxConcurrentRuns,
      tokenVersion: 0,
      disabled: false,
      createdAt: now,
      updatedAt: now,
    };
    if (!(await insertUser(this.deps.mongo, doc))) throw new PreconditionError(`a user named ${username} already exists`);
    if (maxConcurrentRuns !== null) await this.deps.state?.ready.markLimited(doc._id, true);
    return doc;
  }

  /**
   * Sets (or, with null, removes) how many of the user's runs may be RUNNING at once across all
   * executors. Runs already running are not stopped by a lower limit; new claims respect it at once
   * (the set of limited owners that executors check is updated here; the reaper re-syncs it from
   * MongoDB). The caller wakes parked runs.
   */
  async setConcurrencyLimit(userId: string, maxConcurrentRuns: number | null): Promise<UserDoc> {
    checkConcurrencyLimit(maxConcurrentRuns);
    const user = await setUserConcurrencyLimit(this.deps.mongo, userId, maxConcurrentRuns, new Date(this.deps.clock()));
    if (!user) throw new NotFoundError("user", userId);
    await this.deps.state?.ready.markLimited(userId, maxConcurrentRuns !== null);
    return user;
  }

  /** A page of the users not being deleted, by name; the prefix, when given, is checked against what a user name may be. */
  list(match: UserListing, page: PageQuery): Promise<Page<UserDoc>> {
    const prefix = match.usernamePrefix;
    if (prefix != null && !USERNAME_PREFIX_RE.test(prefix)) {
      throw new ValidationError("filter.usernamePrefix", `must be 1–64 of the characters a user name has (A–Z, a–z, 0–9, _ . @ -), got ${JSON.stringify(prefix.slice(0, 80))}`);
    }
    return listLiveUsers(this.deps.mongo, match, page);
  }

  async byIds(ids: readonly string[]): Promise<UserDoc[]> {
    return findUsersByIds(this.deps.mongo, ids);
  }

  /**
   * Makes sure the bootstrap admin exists. With a password from the environment that password is
   * authoritative (a changed one is applied); without one, a password is generated once, returned
   * so the caller can print it, and never stored in clear.
   */
  async ensureAdmin(username: string, password: string | null): Promise<{ created: boolean; generatedPassword: string | null; updated: boolean }> {
    const existing = await findUserByName(this.deps.mongo, username);
    if (!existing) {
      const generated = password === null ? generatePassword() : null;
      try {
        await this.create(username, password ?? generated!, "ADMIN");
      } catch (e) {
        // Another process created it at the same moment: fine.
        if (e instanceof PreconditionError) return { created: false, generatedPassword: null, updated: false };
        throw e;
      }
      return { created: true, generatedPassword: generated, updated: false };
    }
    if (password !== null && !(await verifyPassword(password, existing.passwordHash))) {
      // A changed password revokes the tokens issued under the old one, as changePassword does.
      await resetAdminPassword(this.deps.mongo, existing._id, await hashPassword(password), new Date(this.deps.clock()));
      return { created: false, generatedPassword: null, updated: true };
    }
    return { created: false, generatedPassword: null, updated: false };
  }
}

function checkConcurrencyLimit(n: number | null): void {
  if (n === null) return;
  if (!Number.isInteger(n) || n < 1 || n > MAX_CONCURRENT_RUNS_LIMIT) {
    throw new ValidationError("maxConcurrentRuns", `must be a whole number from 1 to ${MAX_CONCURRENT_RUNS_LIMIT}, or null for no limit (got ${n})`);
  }
}

export function toPrincipal(u: UserDoc): Principal {
  return { userId: u._id, username: u.username, role: u.role };
}
