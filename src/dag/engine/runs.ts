/** Making a DAG run: the document a trigger, a schedule slot or a backfill creates, once per fire key. */
import type { DagDoc, DagRunDoc, RunTrigger } from "../../domain/index.js";
import { DagRunStatus } from "../../domain/index.js";
import { findDagRunByFireKey, insertDagRun, isDuplicateKey, type Mongo } from "../../store/index.js";
import { indexGraph } from "../plan/graph.js";
import { openParentCounts } from "../plan/quiet-ends.js";
import { initialStates } from "../plan/step.js";
import { planOf } from "./definition.js";

export interface NewDagRun {
  id: string;
  fireKey: string;
  trigger: RunTrigger;
  scheduledFor: number;
  paramsJson: string;
  notBefore?: number | null;
  held?: boolean;
  lockJobId?: string | null;
  now: number;
  sweepAfterMs: number;
}

/** The DAG run of `dag` as made: its definition (stored once per version by insertDagRun), every task PENDING. */
export function newDagRun(dag: DagDoc, r: NewDagRun): DagRunDoc {
  const at = new Date(r.now);
  const plan = planOf(dag.tasks);
  const initial = initialStates(plan);
  // Every parent is open (as an advance would write it: its first round then writes only what it starts).
  const open = openParentCounts(indexGraph(plan), initial);
  const tasks = Object.fromEntries(Object.entries(initial).map(([k, v]) => [k, { state: v.state, attempt: v.attempt, ...(open.has(k) ? { openParents: open.get(k)! } : {}), note: null }]));
  return {
    _id: r.id,
    dagId: dag._id,
    dagName: dag.name,
    dagVersion: dag.version,
    ownerId: dag.ownerId,
    definition: { tasks: dag.tasks, failFast: dag.failFast, maxParallel: dag.maxParallel },
    maxParallel: dag.maxParallel,
    paramsJson: r.paramsJson,
    status: DagRunStatus.RUNNING,
    tasks,
    version: 1,
    trigger: r.trigger,
    fireKey: r.fireKey,
    scheduledFor: new Date(r.scheduledFor),
    notBefore: r.notBefore != null && r.notBefore > r.now ? new Date(r.notBefore) : null,
    held: r.held ?? false,
    lockJobId: r.lockJobId ?? null,
    cancelRequested: false,
    sweepAt: new Date(r.now + r.sweepAfterMs),
    createdAt: at,
    updatedAt: at,
    finishedAt: null,
  };
}

/** Inserts the DAG run; when its fire key has one already, that one is returned with `created: false`. */
export async function insertOnce(mongo: Mongo, run: DagRunDoc): Promise<{ run: DagRunDoc; created: boolean }> {
  try {
    await insertDagRun(mongo, run);
    return { run, created: true };
  } catch (e) {
    if (!isDuplicateKey(e)) throw e;
    const existing = await findDagRunByFireKey(mongo, run.fireKey);
    if (!existing) throw e;
    return { run: existing, created: false };
  }
}
