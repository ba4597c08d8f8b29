/**
 * The intents of mutation calls under way (docs/audit.md, "A crash mid-call"): written before the
 * mutation runs, so a call whose API instance dies before its entry is written still leaves a
 * trace, which the recovery pass turns into an entry (outcome UNKNOWN). Those of the same moment
 * go out as one insert; each caller is resolved once its own is stored.
 */
import type { AuditIntentDoc } from "../../domain/index.js";
import { insertAuditIntents, type Mongo } from "../../store/index.js";

interface Waiting {
  doc: AuditIntentDoc;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** Most intents in one insertMany. */
const MAX_BATCH = 500;

export class AuditIntentWriter {
  private queue: Waiting[] = [];
  private running = false;

  constructor(private readonly mongo: Mongo) {}

  write(doc: AuditIntentDoc): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ doc, resolve, reject });
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
          await insertAuditIntents(
            this.mongo,
            batch.map((w) => w.doc),
          );
          for (const w of batch) w.resolve();
        } catch (e) {
          for (const w of batch) w.reject(e);
        }
      }
    } finally {
      this.running = false;
    }
  }
}
