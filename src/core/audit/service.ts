/**
 * The audit trail (issue #31; docs/audit.md): records what the API's mutations did (the resolvers'
 * global middleware calls `begin` before every Mutation field runs and `record` after it), lists
 * entries (administrators all, users their own), verifies the keyed hash chain, applies the
 * retention setting, and turns the intents of calls whose API instance died into entries.
 */
import { actOnUser, type Principal } from "../../auth/index.js";
import { AUDIT_OUTCOME_UNKNOWN, type AuditActor, type AuditEntryDoc, type AuditIntentDoc } from "../../domain/index.js";
import {
  ensureAuditHeadRecord,
  ensureAuditIndexes,
  ensureAuditKeyedRecord,
  auditPage,
  createAuditIntentBatch,
  insertAuditIntent,
  newId,
  staleAuditIntents,
  storedAuditEntryIds,
  deleteAuditIntents,
  truncateAuditBefore,
  type AuditQuery,
  type InsertBatcher,
  type Mongo,
  type Page,
  type PageQuery,
} from "../../store/index.js";
import { metrics, Periodic, type Logger } from "../../support/index.js";
import type { Clock } from "../../shared-state/index.js";
import { auditJson, capped, changedParts } from "./canonical.js";
import { AuditKeyring } from "./keys.js";
import { verifyAuditChain, type AuditVerification } from "./verify.js";
import { AuditWriter } from "./writer.js";

const DAY = 86_400_000;

export interface AuditSettings {
  /** Whether mutations are recorded. `KAIROS_AUDIT`: on or off. @default on */
  enabled: boolean;
  /** How long entries are kept. `KAIROS_AUDIT_RETENTION`, P1D to P36500D. @default P365D */
  retentionMs: number;
  /** The secret the audit key is derived from, `KAIROS_AUDIT_KEY` (at least 32 characters); null: KAIROS_JWT_SECRET's (./keys.ts). */
  key: string | null;
  /** `KAIROS_AUDIT_PREVIOUS_KEYS`: the secrets of earlier keys (earlier KAIROS_AUDIT_KEY or KAIROS_JWT_SECRET values), for verification only. */
  previousKeys: string[];
}

export const DEFAULT_AUDIT_SETTINGS: AuditSettings = { enabled: true, retentionMs: 365 * DAY, key: null, previousKeys: [] };

/** How old an intent with no entry must be before the recovery pass records its call as UNKNOWN: longer than any mutation runs. */
export const AUDIT_INTENT_BOUND_MS = 10 * 60_000;

/** The text of a recovered entry's `error`. */
export const UNKNOWN_OUTCOME_TEXT =
  "the API instance stopped before this call's outcome was recorded: it may have changed something or nothing (look at its targets)";

/** One mutation call as the API saw it; the service redacts, reduces and chains it. */
export interface AuditRecord {
  at: Date;
  action: string;
  actor: AuditActor;
  address: string;
  targetIds: string[];
  outcome: string;
  error: string | null;
  args: unknown;
  /** The document before the change (null: none, e.g. a create); undefined: not read. */
  before?: unknown;
  /** The document after it (null: gone, e.g. a delete); undefined: not known. */
  after?: unknown;
}

/** A mutation call about to run: what is known before it does. */
export type AuditStart = Pick<AuditRecord, "at" | "action" | "actor" | "address" | "targetIds" | "args">;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

export class AuditService {
  private readonly writer: AuditWriter;
  private readonly intents: InsertBatcher<AuditIntentDoc>;
  private readonly keys: AuditKeyring;
  private readonly retention: Periodic;
  private readonly recovery: Periodic;
  private readonly intentBoundMs: number;
  private prepared: Promise<void> | null = null;

  /** `secret`: what the audit key is derived from when KAIROS_AUDIT_KEY is not set (the JWT secret). */
  constructor(
    private readonly deps: { mongo: Mongo; clock: Clock; log: Logger; settings: AuditSettings; secret: string },
    opts: { retentionEveryMs?: number; recoveryEveryMs?: number; intentBoundMs?: number } = {},
  ) {
    this.keys = new AuditKeyring(deps.settings.key ?? deps.secret, deps.settings.previousKeys);
    this.writer = new AuditWriter(deps.mongo, this.keys, deps.log);
    this.intents = createAuditIntentBatch(deps.mongo);
    this.intentBoundMs = opts.intentBoundMs ?? AUDIT_INTENT_BOUND_MS;
    this.retention = new Periodic(() => this.retentionPass(), {
      everyMs: opts.retentionEveryMs ?? 10 * 60_000,
      log: deps.log,
      failure: "audit retention pass failed; the next pass retries",
    });
    this.recovery = new Periodic(() => this.recoveryPass(), {
      everyMs: opts.recoveryEveryMs ?? 5 * 60_000,
      log: deps.log,
      failure: "audit recovery pass failed; the next pass retries",
    });
  }

  /** The id of the key new entries are signed with. */
  get keyId(): string {
    return this.keys.keyId;
  }

  get enabled(): boolean {
    return this.deps.settings.enabled;
  }

  /**
   * Stores the intent of a call about to run (resolves once it is stored) and answers its id, to
   * give `record` when the call has ended; null when auditing is off. A store failure rejects, and
   * the id given with the rejection (`AuditIntentError.id`) is still to be passed to `record`.
   */
  async begin(r: AuditStart): Promise<string | null> {
    if (!this.enabled) return null;
    const id = newId();
    try {
      await this.prepare();
      await insertAuditIntent(this.intents, {
        _id: id,
        at: r.at,
        action: r.action,
        actor: r.actor,
        address: r.address,
        targetIds: [...new Set(r.targetIds)].slice(0, 100),
        args: capped(auditJson(r.args)),
      });
    } catch (e) {
      metrics.auditWriteFailures.inc();
      throw new AuditIntentError(id, e);
    }
    return id;
  }

  /** Stores the entry (resolves once it is written), completing the intent `intentId` if given; does nothing when auditing is off. */
  async record(r: AuditRecord, intentId: string | null = null): Promise<AuditEntryDoc | null> {
    if (!this.enabled) return null;
    await this.prepare();
    let before = r.before === undefined ? undefined : auditJson(r.before);
    let after = r.after === undefined ? undefined : auditJson(r.after);
    if (isObject(before) && isObject(after)) [before, after] = changedParts(before, after);
    const written = this.writer.append({
      at: r.at,
      action: r.action,
      actor: r.actor,
      address: r.address,
      targetIds: [...new Set(r.targetIds)].slice(0, 100),
      outcome: r.outcome,
      error: r.error === null ? null : r.error.slice(0, 500),
      args: capped(auditJson(r.args)),
      before: before === undefined ? null : capped(before),
      after: after === undefined ? null : capped(after),
    }, { intentId });
    try {
      const doc = await written;
      metrics.auditEntries.inc({ outcome: r.outcome });
      return doc;
    } catch (e) {
      metrics.auditWriteFailures.inc();
      throw e;
    }
  }

  /**
   * Turns the intents older than the bound into entries: a call whose API instance died between
   * its intent and its entry is recorded with the outcome UNKNOWN (it may or may not have changed
   * something), in the chain where the pass writes it. An intent whose entry is stored (its
   * removal failed) is only removed. Resolves with how many calls were recorded UNKNOWN.
   */
  async recoveryPass(): Promise<number> {
    await this.prepare();
    const stale = await staleAuditIntents(this.deps.mongo, new Date(this.deps.clock() - this.intentBoundMs), 1_000);
    if (stale.length === 0) return 0;
    const stored = await storedAuditEntryIds(this.deps.mongo, stale.map((i) => i._id));
    await deleteAuditIntents(this.deps.mongo, [...stored]);
    const written = await Promise.all(
      stale
        .filter((i) => !stored.has(i._id))
        .map((i) =>
          this.writer.append(
            { at: i.at, action: i.action, actor: i.actor, address: i.address, targetIds: i.targetIds, outcome: AUDIT_OUTCOME_UNKNOWN, error: UNKNOWN_OUTCOME_TEXT, args: i.args, before: null, after: null },
            { intentId: i._id, recovered: true },
          ),
        ),
    );
    const recovered = written.filter((d) => d !== null).length;
    if (recovered > 0) {
      metrics.auditEntries.inc({ outcome: AUDIT_OUTCOME_UNKNOWN }, recovered);
      this.deps.log.warn({ recovered }, "audit: calls whose API instance stopped before their outcome was recorded, recorded with outcome UNKNOWN");
    }
    return recovered;
  }

  /** A page of entries, newest first: an administrator's of anyone, a user's of their own calls only. */
  async list(p: Principal, q: AuditQuery, page: PageQuery): Promise<Page<AuditEntryDoc>> {
    await this.prepare();
    const actorUserId = p.role === "ADMIN" ? (q.actorUserId ?? null) : actOnUser(p, q.actorUserId ?? p.userId);
    return auditPage(this.deps.mongo, { ...q, actorUserId }, page);
  }

  async verify(): Promise<AuditVerification> {
    await this.prepare();
    return verifyAuditChain(this.deps.mongo, this.keys, this.deps.clock());
  }

  /** Removes the entries older than the retention, keeping the chain verifiable from the oldest kept one. */
  async retentionPass(): Promise<{ anchorSeq: number; removed: number } | null> {
    await this.prepare();
    const now = this.deps.clock();
    const cut = await truncateAuditBefore(this.deps.mongo, new Date(now - this.deps.settings.retentionMs), new Date(now), this.deps.settings.retentionMs, (a) =>
      this.keys.sign("anchor", [a.seq, a.hash, a.truncatedAt.getTime(), a.retentionMs]),
    );
    if (cut && cut.removed > 0) this.deps.log.info({ removed: cut.removed, anchorSeq: cut.anchorSeq }, "audit entries past their retention removed");
    return cut;
  }

  /**
   * The API role's passes: retention every 10 minutes (entries are kept while auditing is off
   * too), and the recovery of calls left without an entry at start and every 5 minutes.
   */
  startRetention(): void {
    this.retention.start();
    this.recovery.start();
    void this.recoveryPass().catch((e: unknown) => this.deps.log.warn({ err: e }, "audit recovery pass failed; the next pass retries"));
  }

  async stopRetention(): Promise<void> {
    await Promise.all([this.retention.stop(), this.recovery.stop()]);
  }

  /**
   * Once per process, before the first write or read: the indexes, the head record, and the record
   * of where keyed entries begin (made at the entry after the last if there is none: the first
   * start with keys).
   */
  private prepare(): Promise<void> {
    this.prepared ??= (async () => {
      await Promise.all([ensureAuditIndexes(this.deps.mongo), ensureAuditHeadRecord(this.deps.mongo)]);
      await ensureAuditKeyedRecord(this.deps.mongo, new Date(this.deps.clock()), (seq, at) => this.keys.sign("keyed", [seq, at.getTime()]));
    })().then(
      () => undefined,
      (e: unknown) => {
        this.prepared = null;
        throw e;
      },
    );
    return this.prepared;
  }
}

/** The intent of a call could not be stored; `id` is still the one to complete (its entry is written under it). */
export class AuditIntentError extends Error {
  constructor(
    readonly id: string,
    cause: unknown,
  ) {
    super("audit intent not written", { cause });
    this.name = "AuditIntentError";
  }
}
