/**
 * Write coalescing for the hot paths. A scheduler firing a burst materialises hundreds of runs at
 * once, each with its own `insertOne`; with the official driver every operation costs a round
 * trip and ~0.1–0.2 ms of client CPU whatever its size. An {@link InsertBatcher} gathers the
 * inserts issued in one turn of the event loop into one `insertMany({ordered: false})` and gives
 * each caller its own outcome, exactly as if it had inserted alone: a duplicate key (the
 * `fireKey` / ledger dedup the crash-replay logic depends on) rejects only the caller whose
 * document collided, with a MongoDB error of code 11000. {@link UpdateBatcher} does the same for
 * conditional updates.
 */
import { MongoServerError, type Collection, type Document, type Filter, type OptionalUnlessRequiredId, type UpdateFilter } from "mongodb";

interface Pending<T> {
  docs: T[];
  resolve: (refused: Set<number>) => void;
  reject: (e: unknown) => void;
}

interface WriteErrorLike {
  index: number;
  code?: number;
  errmsg?: string;
}

/** The per-document write errors of a failed insertMany (an array, or one object, or none). */
function writeErrorsOf(e: unknown): WriteErrorLike[] | null {
  const raw = (e as { writeErrors?: WriteErrorLike[] | WriteErrorLike } | null)?.writeErrors;
  if (raw === undefined || raw === null) return null;
  return Array.isArray(raw) ? raw : [raw];
}

export class InsertBatcher<T extends Document> {
  private pending: Pending<T>[] = [];
  private scheduled = false;

  /** @param maxDocs most documents per insertMany (a bigger turn is split). */
  constructor(
    private readonly coll: Collection<T>,
    private readonly maxDocs = 1_000,
  ) {}

  /** Inserts one document; rejects with a code 11000 error when it is a duplicate. */
  async insertOne(doc: T): Promise<void> {
    const refused = await this.insertMany([doc]);
    if (refused.size > 0) throw duplicateKeyError(this.coll.collectionName);
  }

  /**
   * Inserts documents (unordered); resolves with the indexes of those refused as duplicate keys.
   * Any other failure rejects, as insertMany would.
   */
  insertMany(docs: T[]): Promise<Set<number>> {
    if (docs.length === 0) return Promise.resolve(new Set());
    return new Promise((resolve, reject) => {
      this.pending.push({ docs, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const all = this.pending;
    this.pending = [];
    // Split into groups of at most maxDocs documents, never splitting one caller's documents.
    let group: Pending<T>[] = [];
    let size = 0;
    const groups: Pending<T>[][] = [];
    for (const p of all) {
      if (size > 0 && size + p.docs.length > this.maxDocs) {
        groups.push(group);
        group = [];
        size = 0;
      }
      group.push(p);
      size += p.docs.length;
    }
    if (group.length) groups.push(group);
    await Promise.all(groups.map((g) => this.write(g)));
  }

  private async write(group: Pending<T>[]): Promise<void> {
    const docs = group.flatMap((p) => p.docs);
    try {
      await this.coll.insertMany(docs as OptionalUnlessRequiredId<T>[], { ordered: false });
      for (const p of group) p.resolve(new Set());
      return;
    } catch (e) {
      const errors = writeErrorsOf(e);
      if (!errors) {
        for (const p of group) p.reject(e);
        return;
      }
      // Map each failed index back to its caller: duplicates are that caller's refusals, any
      // other write error fails that caller; the other callers' documents were written.
      let offset = 0;
      for (const p of group) {
        const mine = errors.filter((w) => w.index >= offset && w.index < offset + p.docs.length);
        const other = mine.find((w) => w.code !== 11000);
        if (other) p.reject(new MongoServerError({ message: other.errmsg ?? "write error", code: other.code, errmsg: other.errmsg }));
        else p.resolve(new Set(mine.map((w) => w.index - offset)));
        offset += p.docs.length;
      }
    }
  }
}

function duplicateKeyError(collection: string): MongoServerError {
  const errmsg = `E11000 duplicate key error collection: ${collection}`;
  return new MongoServerError({ message: errmsg, errmsg, code: 11000 });
}

interface PendingUpdate<T> {
  filter: Filter<T>;
  update: UpdateFilter<T>;
  id: unknown;
  op: string;
  resolve: (applied: boolean) => void;
  reject: (e: unknown) => void;
}

/**
 * Conditional single-document updates of one event-loop turn as one `bulkWrite({ordered:
 * false})`, each caller told whether its own filter matched, as `updateOne().matchedCount === 1`
 * would. Every update also sets `marker` to an id of its own; when not every filter matched, one
 * find after the bulkWrite tells which applied. Filters must include `_id`; a document already in the batch waits for the next
 * one, and batches run one after the other, so nothing else this batcher writes can move a marker
 * between the bulkWrite and the find. The marker field must not be written by anything else.
 */
export class UpdateBatcher<T extends Document & { _id: unknown }> {
  private pending: PendingUpdate<T>[] = [];
  private scheduled = false;
  private seq = 0;
  private readonly prefix = Math.random().toString(36).slice(2, 10);

  constructor(
    private readonly coll: Collection<T>,
    private readonly marker: string,
    private readonly maxOps = 500,
  ) {}

  /** True when the filter matched (the update applied). */
  updateOne(filter: Filter<T> & { _id: unknown }, update: UpdateFilter<T>): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const op = `${this.prefix}.${++this.seq}`;
      const set = { ...((update.$set as Record<string, unknown> | undefined) ?? {}), [this.marker]: op };
      this.pending.push({ filter, update: { ...update, $set: set } as UpdateFilter<T>, id: filter._id, op, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.pending.length === 0) return;
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    const batch: PendingUpdate<T>[] = [];
    const later: PendingUpdate<T>[] = [];
    const ids = new Set<unknown>();
    for (const p of this.pending) {
      if (ids.has(p.id) || batch.length >= this.maxOps) later.push(p);
      else {
        ids.add(p.id);
        batch.push(p);
      }
    }
    this.pending = later;
    try {
      let errors: WriteErrorLike[] = [];
      let matched = -1;
      try {
        const res = await this.coll.bulkWrite(
          batch.map((p) => ({ updateOne: { filter: p.filter, update: p.update } })),
          { ordered: false },
        );
        matched = res.matchedCount;
      } catch (e) {
        const w = writeErrorsOf(e);
        if (!w) throw e;
        errors = w;
      }
      // Every filter matched (one document per op, ids are distinct): all applied, nothing to read.
      const all = matched === batch.length;
      const docs = all ? [] : await this.coll.find({ _id: { $in: [...ids] } } as Filter<T>, { projection: { [this.marker]: 1 } }).toArray();
      const applied = new Set(docs.map((d) => (d as Record<string, unknown>)[this.marker]));
      batch.forEach((p, i) => {
        const failed = errors.find((x) => x.index === i);
        if (failed) p.reject(new MongoServerError({ message: failed.errmsg ?? "write error", code: failed.code, errmsg: failed.errmsg }));
        else p.resolve(all || applied.has(p.op));
      });
    } catch (e) {
      for (const p of batch) p.reject(e);
    } finally {
      this.scheduled = false;
      this.schedule();
    }
  }
}
