/**
 * Appends entries to the hash chain. The entries of one process are chained and written in order,
 * in batches (what was recorded while the previous batch was being written goes out as one
 * ordered insertMany), each caller resolved once its own entry is stored. The head is cached
 * between batches; when another API instance has taken a link meanwhile (a duplicate `seq`), the
 * entries not yet written are chained again on the head re-read from the store. So the chain
 * never forks: every link is one unique `seq` whose entry names the hash of the one before.
 *
 * Entries are keyed (v2): hashed with HMAC-SHA-256 under the audit key, which the head record is
 * signed with too (./keys.ts). An entry completing a call whose intent was written takes the
 * intent's id and removes it once stored (a failure there is left to the recovery pass, which
 * finds the entry and removes the intent). Should an entry of that id be stored already (the
 * recovery pass wrote the call as UNKNOWN while it was still running), the late entry is written
 * under a new id and the recovery's entry stays: the trail then shows both.
 */
import type { AuditEntryDoc } from "../../domain/index.js";
import { auditHead, deleteAuditIntents, insertAuditEntries, newId, raiseAuditHead, storedAuditEntryIds, type Mongo } from "../../store/index.js";
import type { Logger } from "../../support/index.js";
import type { AuditKeyring } from "./keys.js";

/** An entry as recorded, before it has a place in the chain. */
export type AuditDraft = Omit<AuditEntryDoc, "_id" | "seq" | "v" | "keyId" | "prevHash" | "hash">;

export interface AppendOptions {
  /** The intent this entry completes: its id becomes the entry's, and it is removed once the entry is stored. */
  intentId?: string | null;
  /** Written by the recovery pass: if the call's own entry is stored meanwhile, this one is dropped (resolved with null). */
  recovered?: boolean;
}

interface Pending {
  draft: AuditDraft;
  id: string;
  intentId: string | null;
  recovered: boolean;
  resolve: (doc: AuditEntryDoc | null) => void;
  reject: (e: unknown) => void;
}

/** Most entries in one insertMany. */
const MAX_BATCH = 500;
/** Links lost to other writers in a row before a batch gives up (its callers' entries rejected). */
const MAX_CONFLICTS = 1_000;

export class AuditWriter {
  private queue: Pending[] = [];
  private running = false;
  private head: { seq: number; hash: string } | null = null;

  constructor(
    private readonly mongo: Mongo,
    private readonly keys: AuditKeyring,
    private readonly log: Logger,
  ) {}

  /** Resolves with the stored entry (null: a recovered entry whose call's own entry was stored first). */
  append(draft: AuditDraft, opts: AppendOptions = {}): Promise<AuditEntryDoc | null> {
    return new Promise((resolve, reject) => {
      const intentId = opts.intentId ?? null;
      this.queue.push({ draft, id: intentId ?? newId(), intentId, recovered: opts.recovered ?? false, resolve, reject });
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        try {
          await this.write(batch);
        } catch (e) {
          // The head may be stale after a failure: read it again next time.
          this.head = null;
          for (const p of batch) p.reject(e);
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** Writes the batch in order; on a lost link, re-reads the head and chains the rest again. */
  private async write(batch: Pending[]): Promise<void> {
    let rest = batch;
    for (let conflicts = 0; rest.length > 0; ) {
      this.head ??= await auditHead(this.mongo);
      const docs = this.chain(rest, this.head);
      const inserted = await insertAuditEntries(this.mongo, docs);
      if (inserted > 0) {
        const last = docs[inserted - 1]!;
        this.head = { seq: last.seq, hash: last.hash };
        await raiseAuditHead(this.mongo, last.seq, last.hash, this.keys.sign("head", [last.seq, last.hash]));
        await this.intentsDone(rest.slice(0, inserted));
        for (let i = 0; i < inserted; i++) rest[i]!.resolve(docs[i]!);
      }
      rest = rest.slice(inserted);
      if (rest.length > 0) {
        if (++conflicts > MAX_CONFLICTS) throw new Error(`audit: lost ${MAX_CONFLICTS} links in a row to other writers`);
        this.head = null;
        rest = await this.withoutStoredIds(rest);
      }
    }
  }

  /** A duplicate key is a lost link, or an id taken (a recovered entry and its call's own): the latter are settled here. */
  private async withoutStoredIds(rest: Pending[]): Promise<Pending[]> {
    const stored = await storedAuditEntryIds(this.mongo, rest.map((p) => p.id));
    if (stored.size === 0) return rest;
    const kept: Pending[] = [];
    for (const p of rest) {
      if (!stored.has(p.id)) kept.push(p);
      else if (p.recovered) {
        // The call's own entry is stored: nothing to recover.
        await this.intentsDone([p]);
        p.resolve(null);
      } else {
        // The recovery pass recorded this call as UNKNOWN while it ran: its real end gets an entry of its own.
        kept.push({ ...p, id: newId() });
      }
    }
    return kept;
  }

  private async intentsDone(done: Pending[]): Promise<void> {
    const ids = done.flatMap((p) => (p.intentId ? [p.intentId] : []));
    try {
      await deleteAuditIntents(this.mongo, ids);
    } catch (e) {
      // The entries are stored: the recovery pass finds them and removes their intents.
      this.log.warn({ err: e, intents: ids.length }, "audit intents not removed; the recovery pass removes them");
    }
  }

  private chain(pending: Pending[], head: { seq: number; hash: string }): AuditEntryDoc[] {
    let prev = head;
    return pending.map((p) => {
      const body = { _id: p.id, seq: prev.seq + 1, v: 2 as const, keyId: this.keys.keyId, ...p.draft, prevHash: prev.hash };
      const doc: AuditEntryDoc = { ...body, hash: this.keys.entryHash(body)! };
      prev = { seq: doc.seq, hash: doc.hash };
      return doc;
    });
  }
}
