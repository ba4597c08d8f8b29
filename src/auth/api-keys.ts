/**
 * API keys for service accounts: `kairos_` + 43 characters of base64url (256 random bits). Only the
 * key's SHA-256 is stored. A fast hash is right here, unlike for passwords: a password is short and
 * chosen by a person, so its hash must be slow to resist guessing; a key is 256 random bits, so no
 * guessing can succeed however fast the hash, and a fast hash lets the key be found by an indexed
 * lookup on every request. The recognisable prefix lets secret scanners spot leaked keys and lets
 * the server tell a key from a JWT without trying both.
 */
import { createHash, randomBytes } from "node:crypto";
import { HIDDEN_CHARACTERS, HIDDEN_CHARACTERS_RULE, LimitReachedError, unpairedSurrogateProblem, ValidationError } from "../domain/index.js";
import type { Logger } from "../support/index.js";
import type { Clock } from "../shared-state/index.js";
import { newId, type KeyListing, type Mongo, type Page, type PageQuery } from "../store/index.js";
import {
  countActiveKeys,
  deleteKey,
  deleteOwnerKeys,
  findKey,
  findKeyByHash,
  findKeyWithoutHash,
  findOwnerKeyHashes,
  insertKey,
  listKeys,
  recordKeyUse,
  revokeKey,
} from "../store/index.js";
import type { ApiKeyDoc, ApiKeyScope } from "../domain/index.js";

export const API_KEY_PREFIX = "kairos_";
/** Keys a user may have that are neither revoked nor expired. */
export const MAX_ACTIVE_KEYS = 100;
/** lastUsedAt is written at most this often per key. @default 60 s */
export const LAST_USED_EVERY_MS = 60_000;
const NAME_RE = new RegExp(`^[^${HIDDEN_CHARACTERS}]{1,64}$`);

export const isApiKey = (credential: string): boolean => credential.startsWith(API_KEY_PREFIX);
export const hashApiKey = (key: string): string => createHash("sha256").update(key).digest("hex");

export interface NewApiKey {
  name: string;
  scope: ApiKeyScope;
  expiresAt: Date | null;
}

export class ApiKeyService {
  private readonly cache = new Map<string, { at: number; doc: Promise<ApiKeyDoc | null> }>();
  private readonly touched = new Map<string, number>();

  constructor(private readonly deps: { mongo: Mongo; clock: Clock; log: Logger; cacheMs: number }) {}

  /** Makes a key for `ownerId`. The returned `key` is the only time the secret exists outside the caller. */
  async create(ownerId: string, createdBy: string, input: NewApiKey): Promise<{ key: string; doc: ApiKeyDoc }> {
    const name = input.name.trim();
    const unpaired = unpairedSurrogateProblem(name);
    if (unpaired) throw new ValidationError("name", unpaired);
    if (!NAME_RE.test(name)) throw new ValidationError("name", `must be 1–64 characters with ${HIDDEN_CHARACTERS_RULE}`);
    const now = this.deps.clock();
    if (input.expiresAt && input.expiresAt.getTime() <= now) {
      throw new ValidationError("expiresAt", `${input.expiresAt.toISOString()} is not in the future`);
    }
    const active = await countActiveKeys(this.deps.mongo, ownerId, new Date(now));
    if (active >= MAX_ACTIVE_KEYS) throw new LimitReachedError(`at most ${MAX_ACTIVE_KEYS} active API keys per user; revoke one first (revokeApiKey)`);
    const key = API_KEY_PREFIX + randomBytes(32).toString("base64url");
    const doc: ApiKeyDoc = {
      _id: newId(),
      ownerId,
      name,
      prefix: key.slice(0, API_KEY_PREFIX.length + 6),
      hash: hashApiKey(key),
      scope: input.scope,
      expiresAt: input.expiresAt,
      lastUsedAt: null,
      revokedAt: null,
      createdBy,
      createdAt: new Date(now),
    };
    await insertKey(this.deps.mongo, doc);
    // Counted again once inserted: of concurrent creations, the last to insert sees them all, so no
    // burst can take the owner past the bound (a burst may be refused a little early instead).
    if ((await countActiveKeys(this.deps.mongo, ownerId, new Date(now))) > MAX_ACTIVE_KEYS) {
      await deleteKey(this.deps.mongo, doc._id);
      throw new LimitReachedError(`at most ${MAX_ACTIVE_KEYS} active API keys per user; revoke one first (revokeApiKey)`);
    }
    this.deps.log.info({ keyId: doc._id, ownerId, createdBy, scope: doc.scope }, "API key created");
    return { key, doc };
  }

  /** A page of one owner's keys, newest first; `match.revoked` null: revoked ones included. */
  list(match: KeyListing, page: PageQuery): Promise<Page<ApiKeyDoc>> {
    return listKeys(this.deps.mongo, match, page);
  }

  async get(id: string): Promise<ApiKeyDoc | null> {
    return findKeyWithoutHash(this.deps.mongo, id);
  }

  /** Revokes a key (idempotent: a revoked key keeps its first revocation time). */
  async revoke(id: string): Promise<ApiKeyDoc | null> {
    await revokeKey(this.deps.mongo, id, new Date(this.deps.clock()));
    const doc = await findKey(this.deps.mongo, id);
    if (doc) this.cache.delete(doc.hash);
    return doc;
  }

  async deleteOwner(ownerId: string): Promise<number> {
    const docs = await findOwnerKeyHashes(this.deps.mongo, ownerId);
    for (const d of docs) this.cache.delete(d.hash);
    return deleteOwnerKeys(this.deps.mongo, ownerId);
  }

  /** The stored key with this hash (of a presented key), or null; cached `cacheMs` per key. */
  lookup(hash: string): Promise<ApiKeyDoc | null> {
    const now = this.deps.clock();
    const hit = this.cache.get(hash);
    if (hit && now - hit.at < this.deps.cacheMs) return hit.doc;
    const doc = findKeyByHash(this.deps.mongo, hash);
    doc.catch(() => this.cache.delete(hash));
    if (this.cache.size > 100_000) this.cache.clear();
    this.cache.set(hash, { at: now, doc });
    return doc;
  }

  /** Records that a key was used, at most once per LAST_USED_EVERY_MS per key; never waits, never fails the request. */
  touch(doc: ApiKeyDoc): void {
    const now = this.deps.clock();
    const last = Math.max(this.touched.get(doc._id) ?? 0, doc.lastUsedAt?.getTime() ?? 0);
    if (now - last < LAST_USED_EVERY_MS) return;
    this.touched.set(doc._id, now);
    if (this.touched.size > 100_000) this.touched.clear();
    // Conditional, so N API instances write it at most N times a minute, usually once.
    recordKeyUse(this.deps.mongo, doc._id, new Date(now), new Date(now - LAST_USED_EVERY_MS))
      .catch((e: unknown) => this.deps.log.warn({ err: e, keyId: doc._id }, "could not record API key use"));
  }
}
