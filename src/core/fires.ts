/**
 * The fire ledger: every slot a schedule produces ends in exactly one recorded outcome. The
 * document id is the slot's fireKey, so an outcome is written once; a second write for the same
 * slot (a replay after a crash) is absorbed and reported as a duplicate.
 */
import { metrics } from "../metrics.js";
import { isDuplicateKey, type Mongo } from "../store/mongo.js";
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
  constructor(private readonly mongo: Mongo) {}

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
    let failed = new Set<number>();
    try {
      await this.mongo.c.fires.insertMany(docs, { ordered: false });
    } catch (e) {
      if (!isDuplicateKey(e)) throw e;
      const errors = (e as { writeErrors?: Array<{ index: number }> | { index: number } }).writeErrors;
      failed = new Set((Array.isArray(errors) ? errors : errors ? [errors] : []).map((w) => w.index));
    }
    records.forEach((r, i) => {
      if (failed.has(i)) return;
      metrics.fires.inc({ outcome: r.outcome });
      if (r.outcome === "FIRED" && r.latenessMs != null) metrics.fireLateness.observe(r.latenessMs / 1000);
    });
    return records.length - failed.size;
  }
}
