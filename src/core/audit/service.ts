/**
 * The audit trail (issue #31; docs/audit.md): records what the API's mutations did (the resolvers'
 * global middleware calls `record` for every Mutation field), lists entries (administrators all,
 * users their own), verifies the hash chain, and applies the retention setting.
 */
import { actOnUser, type Principal } from "../../auth/index.js";
import type { AuditActor, AuditEntryDoc } from "../../domain/index.js";
import { ensureAuditHeadRecord, ensureAuditIndexes, auditPage, truncateAuditBefore, type AuditQuery, type Mongo, type Page, type PageQuery } from "../../store/index.js";
import { metrics, Periodic, type Logger } from "../../support/index.js";
import type { Clock } from "../../shared-state/index.js";
import { auditJson, capped, changedParts } from "./canonical.js";
import { verifyAuditChain, type AuditVerification } from "./verify.js";
import { AuditWriter } from "./writer.js";

const DAY = 86_400_000;

export interface AuditSettings {
  /** Whether mutations are recorded. `KAIROS_AUDIT`: on or off. @default on */
  enabled: boolean;
  /** How long entries are kept. `KAIROS_AUDIT_RETENTION`, P1D to P36500D. @default P365D */
  retentionMs: number;
}

export const DEFAULT_AUDIT_SETTINGS: AuditSettings = { enabled: true, retentionMs: 365 * DAY };

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

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

export class AuditService {
  private readonly writer: AuditWriter;
  private readonly retention: Periodic;
  private prepared: Promise<void> | null = null;

  constructor(
    private readonly deps: { mongo: Mongo; clock: Clock; log: Logger; settings: AuditSettings },
    opts: { retentionEveryMs?: number } = {},
  ) {
    this.writer = new AuditWriter(deps.mongo);
    this.retention = new Periodic(() => this.retentionPass(), {
      everyMs: opts.retentionEveryMs ?? 10 * 60_000,
      log: deps.log,
      failure: "audit retention pass failed; the next pass retries",
    });
  }

  get enabled(): boolean {
    return this.deps.settings.enabled;
  }

  /** Stores the entry (resolves once it is written); does nothing when auditing is off. */
  async record(r: AuditRecord): Promise<AuditEntryDoc | null> {
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
    });
    try {
      const doc = await written;
      metrics.auditEntries.inc({ outcome: r.outcome });
      return doc;
    } catch (e) {
      metrics.auditWriteFailures.inc();
      throw e;
    }
  }

  /** A page of entries, newest first: an administrator's of anyone, a user's of their own calls only. */
  async list(p: Principal, q: AuditQuery, page: PageQuery): Promise<Page<AuditEntryDoc>> {
    await this.prepare();
    const actorUserId = p.role === "ADMIN" ? (q.actorUserId ?? null) : actOnUser(p, q.actorUserId ?? p.userId);
    return auditPage(this.deps.mongo, { ...q, actorUserId }, page);
  }

  async verify(): Promise<AuditVerification> {
    await this.prepare();
    return verifyAuditChain(this.deps.mongo, this.deps.clock());
  }

  /** Removes the entries older than the retention, keeping the chain verifiable from the oldest kept one. */
  async retentionPass(): Promise<{ anchorSeq: number; removed: number } | null> {
    await this.prepare();
    const now = this.deps.clock();
    const cut = await truncateAuditBefore(this.deps.mongo, new Date(now - this.deps.settings.retentionMs), new Date(now), this.deps.settings.retentionMs);
    if (cut && cut.removed > 0) this.deps.log.info({ removed: cut.removed, anchorSeq: cut.anchorSeq }, "audit entries past their retention removed");
    return cut;
  }

  /** The retention pass every 10 minutes (the API role); entries are kept while auditing is off too. */
  startRetention(): void {
    this.retention.start();
  }

  stopRetention(): Promise<void> {
    return this.retention.stop();
  }

  private prepare(): Promise<void> {
    this.prepared ??= Promise.all([ensureAuditIndexes(this.deps.mongo), ensureAuditHeadRecord(this.deps.mongo)]).then(
      () => undefined,
      (e: unknown) => {
        this.prepared = null;
        throw e;
      },
    );
    return this.prepared;
  }
}
