/** What `Job.problems` reads of runs and of the fire ledger for a page of jobs, in one query each (core/waits/). */
import { dagDefinitionId, fireKey, RunStatus } from "../../domain/index.js";
import type { FireDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

/** A job's QUEUED runs: how many, how many its owner's concurrency limit parked, and the oldest park. */
export interface JobQueueSummary {
  queued: number;
  parked: number;
  parkedSince: Date | null;
}

/** {@link JobQueueSummary} of each job that has QUEUED runs (one aggregation by the jobs' ids). */
export async function summarizeQueuedOfJobs(mongo: Mongo, jobIds: readonly string[]): Promise<Map<string, JobQueueSummary>> {
  const rows = await mongo.c.runs
    .aggregate<{ _id: string; queued: number; parked: number; parkedSince: Date | null }>([
      { $match: { jobId: { $in: [...jobIds] }, status: RunStatus.QUEUED } },
      {
        $group: {
          _id: "$jobId",
          queued: { $sum: 1 },
          parked: { $sum: { $cond: [{ $eq: ["$heldByLimit", true] }, 1, 0] } },
          parkedSince: { $min: { $cond: [{ $eq: ["$heldByLimit", true] }, "$heldAt", null] } },
        },
      },
    ])
    .toArray();
  return new Map(rows.map((r) => [r._id, { queued: r.queued, parked: r.parked, parkedSince: r.parkedSince ?? null }]));
}

/** The ledger entries of these (job, slot) pairs: each job's latest outcome, by `jobId`. */
export async function findFiresAtSlots(mongo: Mongo, slots: ReadonlyArray<{ jobId: string; slotAt: Date }>): Promise<Map<string, FireDoc>> {
  if (slots.length === 0) return new Map();
  const wanted = new Set(slots.map((s) => fireKey(s.jobId, s.slotAt.getTime())));
  const docs = await mongo.c.fires
    .find({ jobId: { $in: [...new Set(slots.map((s) => s.jobId))] }, slotAt: { $in: slots.map((s) => s.slotAt) } })
    .toArray();
  return new Map(docs.filter((d) => wanted.has(fireKey(d.jobId, d.slotAt.getTime()))).map((d) => [d.jobId, d]));
}

/** What `DagRunTask.waiting` reads of a DAG run: its state, its tasks' states and each task's parents. */
export interface DagRunWaitView {
  _id: string;
  ownerId: string;
  status: string;
  held: boolean;
  notBefore: Date | null;
  maxParallel: number | null;
  tasks: Record<string, { state: string }>;
  parents: Map<string, string[]>;
}

/** {@link DagRunWaitView} of a DAG run (its definition's graph from its version's stored definition, or its own older copy). */
export async function findDagRunWaitView(mongo: Mongo, id: string): Promise<DagRunWaitView | null> {
  const graph = { "definition.tasks.key": 1, "definition.tasks.dependsOn": 1, "definition.maxParallel": 1 };
  const doc = await mongo.c.dagRuns.findOne({ _id: id }, { projection: { ownerId: 1, status: 1, held: 1, notBefore: 1, maxParallel: 1, dagId: 1, dagVersion: 1, tasks: 1, ...graph } });
  if (!doc) return null;
  const definition = doc.definition ?? (await mongo.c.dagDefinitions.findOne({ _id: dagDefinitionId(doc.dagId, doc.dagVersion) }, { projection: graph }))?.definition;
  return {
    _id: doc._id,
    ownerId: doc.ownerId,
    status: doc.status,
    held: doc.held ?? false,
    notBefore: doc.notBefore ?? null,
    maxParallel: doc.maxParallel ?? definition?.maxParallel ?? null,
    tasks: doc.tasks ?? {},
    parents: new Map((definition?.tasks ?? []).map((t) => [t.key, t.dependsOn ?? []])),
  };
}
