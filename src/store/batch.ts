/**
 * Write coalescing for the hot paths. A scheduler firing a burst materialises hundreds of runs at
 * once, each with its own `insertOne`; with the official driver every operation costs a round
 * trip and ~0.1–0.2 ms of client CPU whatever its size. An {@link InsertBatcher} gathers the
 * inserts issued in one turn of the event loop into one `insertMany({ordered: false})` and gives
 * each caller its own outcome, exactly as if it had inserted alone: a duplicate key (the
 * `fireKey` / ledger dedup the crash-replay logic depends on) rejects only the caller whose
 * document collided, with a MongoDB error of code 11000.
 */
import { MongoServerError, type Collection, type Document, type OptionalUnlessRequiredId } from "mongodb";

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
