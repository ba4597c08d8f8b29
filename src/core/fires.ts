/**
 * The fire ledger: every slot a schedule produces ends in exactly one recorded outcome. The
 * document id is the slot's fireKey, so an outcome is written once; a second write for the same
 * slot (a replay after a crash) is absorbed and reported as a duplicate.
 */
import { metrics } from "../metrics.js";
import { InsertBatcher } from "../store/batch.js";
import type { Mongo } from "../store/mongo.js";
import type { FireDoc, FireOutcomeDoc, JobDoc } from "../store/types.js";

export const fireKeyOf = (jobId: string, slotAt: number) => `${jobId}@${slotAt}`;

export interface FireRecord {
  slotAt: number;
  outcome: FireOutcomeDoc;
  runId?: string | null;
  latenessMs?: number | null;
  reason?: string | null;
  /** Distinguishes a record that is not a slot of its own (a DST skip at a transition instant). */
  keySuffix?: string;
}

export class FireLedger {
  /** The outcomes of many jobs' passes in one event-loop turn go to MongoDB as one insertMany. */
  private readonly inserts: InsertBatcher<FireDoc>;

  constructor(mongo: Mongo) {
    this.inserts = new InsertBatcher(mongo.c.fires);
  }

  /** Records outcomes; returns how many were new (the rest already had one). */
  async record(job: Pick<JobDoc, "_id" | "ownerId">, records: readonly FireRecord[], now: number): Promise<number> {
    if (records.length === 0) return 0;
    const docs: FireDoc[] = records.map((r) => ({
      _id: fireKeyOf(job._id, r.slotAt) + (r.keySuffix ?? ""),
      jobId: job._id,
      ownerId: job.ownerId,
      slotAt: new Date(r.slotAt),
      outcome: r.outcome,
      runId: r.runId ?? null,
      latenessMs: r.latenessMs ?? null,
      reason: r.reason ?? null,
      recordedAt: new Date(now),
    }));
    const failed = await this.inserts.insertMany(docs);
    records.forEach((r, i) => {
      if (failed.has(i)) return;
      metrics.fires.inc({ outcome: r.outcome });
      if (r.outcome === "FIRED" && r.latenessMs != null) metrics.fireLateness.observe(r.latenessMs / 1000);
    });
    return records.length - failed.size;
  }
}
