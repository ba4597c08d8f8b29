/**
 * The fire ledger: every slot a schedule produces ends in exactly one recorded outcome. The
 * document id is the slot's fireKey, so an outcome is written once; a second write for the same
 * slot (a replay after a crash) is absorbed and reported as a duplicate.
 *
 * One exception: a FIRED outcome whose run was withdrawn before its fire time (a staged run taken
 * back when its job changed; RunService.withdrawStaged) is no outcome, and the next record for that
 * slot replaces it. Withdrawing deletes the entry, but a change can race the pass that staged the
 * run (the entry written after the withdrawal looked for it), and the slot must still end with the
 * outcome judged under the job as it is now.
 */
import { fireKey, isWithdrawnFireKey } from "../domain/index.js";
import { metrics } from "../support/index.js";
import type { InsertBatcher } from "../store/index.js";
import { createFireInsertBatch, findFiredWithRun, insertFires, replaceFire } from "../store/index.js";
import type { Mongo } from "../store/index.js";
import { findFireKeys } from "../store/index.js";
import type { FireDoc, JobDoc } from "../domain/index.js";
import type { FireOutcome } from "../domain/index.js";

export interface FireRecord {
  slotAt: number;
  outcome: FireOutcome;
  runId?: string | null;
  latenessMs?: number | null;
  reason?: string | null;
  /** The ledger key (domain/fire-keys.ts); the slot's fireKey when absent. */
  key?: string;
}

export class FireLedger {
  /** The outcomes of many jobs' passes in one event-loop turn go to MongoDB as one insertMany. */
  private readonly inserts: InsertBatcher<FireDoc>;

  constructor(private readonly mongo: Mongo) {
    this.inserts = createFireInsertBatch(mongo);
  }

  /** Writes over the duplicates among `failed` whose stored outcome is a withdrawn run's FIRED; drops them from `failed`. */
  private async replaceWithdrawn(docs: readonly FireDoc[], failed: Set<number>): Promise<void> {
    const indexOf = new Map([...failed].map((i) => [docs[i]!._id, i]));
    const existing = await findFiredWithRun(this.mongo, [...indexOf.keys()]);
    if (existing.length === 0) return;
    const runs = await findFireKeys(this.mongo, existing.map((f) => f.runId!));
    const withdrawn = new Set(runs.filter((r) => isWithdrawnFireKey(r.fireKey)).map((r) => r._id));
    for (const f of existing) {
      if (!withdrawn.has(f.runId!)) continue;
      const i = indexOf.get(f._id)!;
      if (await replaceFire(this.mongo, docs[i]!, f.runId!)) failed.delete(i);
    }
  }

  /** Records outcomes; returns how many were new (the rest already had one). */
  async record(job: Pick<JobDoc, "_id" | "ownerId">, records: readonly FireRecord[], now: number): Promise<number> {
    if (records.length === 0) return 0;
    const docs: FireDoc[] = records.map((r) => ({
      _id: r.key ?? fireKey(job._id, r.slotAt),
      jobId: job._id,
      ownerId: job.ownerId,
      slotAt: new Date(r.slotAt),
      outcome: r.outcome,
      runId: r.runId ?? null,
      latenessMs: r.latenessMs ?? null,
      reason: r.reason ?? null,
      recordedAt: new Date(now),
    }));
    const failed = await insertFires(this.inserts, docs);
    if (failed.size > 0) await this.replaceWithdrawn(docs, failed);
    records.forEach((r, i) => {
      if (failed.has(i)) return;
      metrics.fires.inc({ outcome: r.outcome });
      if (r.outcome === "FIRED" && r.latenessMs != null) metrics.fireLateness.observe(r.latenessMs / 1000);
    });
    return records.length - failed.size;
  }
}
