/**
 * A job's last run (JobDoc.lastRun): written as each of its runs ends, so the jobs list reads how
 * every job went from the job documents alone (one query, filterable by the last run's status).
 *
 * Runs end in any order (an executor's results wait, a retried run ends again, a cancel races a
 * finish), so the write is conditional: it applies only when the run sorts at or after the one
 * stored, by (scheduledFor, runId). An older run ending after a newer one leaves it in place; the
 * same run ending again (retryRun) replaces itself.
 */
import type { AnyBulkWriteOperation, Filter } from "mongodb";
import type { JobDoc, JobLastRun } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/** True when `a` sorts after `b` (later scheduled, or the same instant and a greater id). */
function after(a: JobLastRun, b: JobLastRun): boolean {
  const d = a.scheduledFor.getTime() - b.scheduledFor.getTime();
  return d > 0 || (d === 0 && a.runId > b.runId);
}

/** The update of `jobId`'s lastRun to `last`, applied only if nothing later is stored. */
function lastRunUpdate(jobId: string, last: JobLastRun): AnyBulkWriteOperation<JobDoc> {
  const filter: Filter<JobDoc> = {
    _id: jobId,
    $or: [
      { lastRun: null },
      { "lastRun.scheduledFor": { $lt: last.scheduledFor } },
      { "lastRun.scheduledFor": last.scheduledFor, "lastRun.runId": { $lte: last.runId } },
    ],
  };
  return { updateOne: { filter, update: { $set: { lastRun: last } } } };
}

/**
 * Records ended runs as their jobs' last runs. The ends of one event-loop turn travel in one
 * unordered bulkWrite, the latest per job only (an executor's batch of results is one write,
 * not one per run). Resolves once written; a job that no longer exists is no error.
 */
export class LastRunWriter {
  private pending = new Map<string, JobLastRun>();
  private written: Promise<void> | null = null;

  constructor(private readonly mongo: Mongo) {}

  record(jobId: string, last: JobLastRun): Promise<void> {
    const known = this.pending.get(jobId);
    if (!known || after(last, known)) this.pending.set(jobId, last);
    this.written ??= new Promise<void>((resolve, reject) =>
      setImmediate(() => {
        const batch = this.pending;
        this.pending = new Map();
        this.written = null;
        const ops = [...batch].map(([id, l]) => lastRunUpdate(id, l));
        this.mongo.c.jobs.bulkWrite(ops, { ordered: false }).then(() => resolve(), reject);
      }),
    );
    return this.written;
  }
}
