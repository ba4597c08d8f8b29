import { ConflictError, NotFoundError, UnauthenticatedError, ValidationError } from "../errors.js";
import type { Logger } from "../log.js";
import { generatePassword, hashPassword, verifyPassword } from "../auth/passwords.js";
import type { Principal, TokenService } from "../auth/tokens.js";
import { isDuplicateKey, newId, type Mongo } from "../store/mongo.js";
import type { UserDoc, UserRole } from "../store/types.js";
import type { Clock, SharedState } from "../scheduler/ports.js";

const USERNAME_RE = /^[A-Za-z0-9_.@-]{3,64}$/;
const MIN_PASSWORD = 8;
/** Bounds of a user's `maxConcurrentRuns`. */
export const MAX_CONCURRENT_RUNS_LIMIT = 100_000;
const MAX_PASSWORD = 256;

// Verifying against a dummy hash when the user does not exist keeps the response time the same,
// so login timing does not reveal which user names exist.
let dummyHash: Promise<string> | null = null;

export class UserService {
  constructor(
    /** `state`: where dispatch looks up which owners have a limit (mirrored here on every change). */
    private readonly deps: { mongo: Mongo; tokens: TokenService; clock: Clock; log: Logger; state?: SharedState },
  ) {}

  private get users() {
    return this.deps.mongo.c.users;
  }

  async login(username: string, password: string): Promise<{ token: string; expiresAt: Date; user: UserDoc }> {
    const user = await this.users.findOne({ username });
    dummyHash ??= hashPassword(generatePassword());
    const ok = await verifyPassword(password, user?.passwordHash ?? (await dummyHash));
    if (!user || !ok) throw new UnauthenticatedError("invalid username or password");
    const { token, expiresAt } = this.deps.tokens.issue(toPrincipal(user));
    return { token, expiresAt, user };
  }

  async create(username: string, password: string, role: UserRole, maxConcurrentRuns: number | null = null): Promise<UserDoc> {
    if (!USERNAME_RE.test(username)) {
      throw new ValidationError("username", "3–64 characters of letters, digits, '_', '.', '@', '-'");
    }
    if (password.length < MIN_PASSWORD || password.length > MAX_PASSWORD) {
      throw new ValidationError("password", `must be ${MIN_PASSWORD} to ${MAX_PASSWORD} characters long`);
    }
    checkConcurrencyLimit(maxConcurrentRuns);
    const now = new Date(this.deps.clock());
    const doc: UserDoc = {
      _id: newId(),
      username,
      passwordHash: await hashPassword(password),
      role,
      maxConcurrentRuns,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await this.users.insertOne(doc);
    } catch (e) {
      if (isDuplicateKey(e)) throw new ConflictError(`a user named ${username} already exists`);
      throw e;
    }
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
    const user = await this.users.findOneAndUpdate(
      { _id: userId },
      { $set: { maxConcurrentRuns, updatedAt: new Date(this.deps.clock()) } },
      { returnDocument: "after" },
    );
    if (!user) throw new NotFoundError("user", userId);
    await this.deps.state?.ready.markLimited(userId, maxConcurrentRuns !== null);
    return user;
  }

  async list(): Promise<UserDoc[]> {
    return this.users.find({}, { sort: { username: 1 } }).toArray();
  }

  async byIds(ids: readonly string[]): Promise<UserDoc[]> {
    return this.users.find({ _id: { $in: [...ids] } }).toArray();
  }

  /**
   * Makes sure the bootstrap admin exists. With a password from the environment that password is
   * authoritative (a changed one is applied); without one, a password is generated once, returned
   * so the caller can print it, and never stored in clear.
   */
  async ensureAdmin(username: string, password: string | null): Promise<{ created: boolean; generatedPassword: string | null; updated: boolean }> {
    const existing = await this.users.findOne({ username });
    if (!existing) {
      const generated = password === null ? generatePassword() : null;
      try {
        await this.create(username, password ?? generated!, "ADMIN");
      } catch (e) {
        // Another process created it at the same moment: fine.
        if (e instanceof ConflictError) return { created: false, generatedPassword: null, updated: false };
        throw e;
      }
      return { created: true, generatedPassword: generated, updated: false };
    }
    if (password !== null && !(await verifyPassword(password, existing.passwordHash))) {
      await this.users.updateOne(
        { _id: existing._id },
        { $set: { passwordHash: await hashPassword(password), role: "ADMIN", updatedAt: new Date(this.deps.clock()) } },
      );
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
