/**
 * Appends entries to the hash chain. The entries of one process are chained and written in order,
 * in batches (what was recorded while the previous batch was being written goes out as one
 * ordered insertMany), each caller resolved once its own entry is stored. The head is cached
 * between batches; when another API instance has taken a link meanwhile (a duplicate `seq`), the
 * entries not yet written are chained again on the head re-read from the store. So the chain
 * never forks: every link is one unique `seq` whose entry names the hash of the one before.
 */
import type { AuditEntryDoc } from "../../domain/index.js";
import { auditHead, insertAuditEntries, newId, raiseAuditHead, type Mongo } from "../../store/index.js";
import { auditHash } from "./canonical.js";

/** An entry as recorded, before it has a place in the chain. */
export type AuditDraft = Omit<AuditEntryDoc, "_id" | "seq" | "v" | "prevHash" | "hash">;

interface Pending {
  draft: AuditDraft;
  id: string;
  resolve: (doc: AuditEntryDoc) => void;
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

  constructor(private readonly mongo: Mongo) {}

  append(draft: AuditDraft): Promise<AuditEntryDoc> {
    return new Promise((resolve, reject) => {
      this.queue.push({ draft, id: newId(), resolve, reject });
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
        await raiseAuditHead(this.mongo, last.seq, last.hash);
        for (let i = 0; i < inserted; i++) rest[i]!.resolve(docs[i]!);
      }
      if (inserted < docs.length) {
        if (++conflicts > MAX_CONFLICTS) throw new Error(`audit: lost ${MAX_CONFLICTS} links in a row to other writers`);
        this.head = null;
      }
      rest = rest.slice(inserted);
    }
  }

  private chain(pending: Pending[], head: { seq: number; hash: string }): AuditEntryDoc[] {
    let prev = head;
    return pending.map((p) => {
      const body = { _id: p.id, seq: prev.seq + 1, v: 1 as const, ...p.draft, prevHash: prev.hash };
      const doc: AuditEntryDoc = { ...body, hash: auditHash(body) };
      prev = { seq: doc.seq, hash: doc.hash };
      return doc;
    });
  }
}
