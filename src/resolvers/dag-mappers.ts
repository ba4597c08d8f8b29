/** DAG documents → GraphQL objects. */
import { observedStates, taskStateOfRun, instanceFireKey } from "../dag/index.js";
import type { DagDoc, DagRunDoc, DagRunSummary, RunDoc } from "../domain/index.js";
import type { DagEvent } from "../dag/index.js";
import type { Dag, DagRun, DagRunEvent, DagRunTask, DagTask } from "../schema/index.js";
import type { RunEvent } from "../core/index.js";
import { formatDuration } from "../timing/index.js";
import { toRetry, toRun, toSchedule, toSpec } from "./mappers.js";

/** A DAG as the API shows it; one read without its tasks (a listing) has its tasks read when asked for (DagResolver.tasks). */
export function toDag(d: DagDoc | Omit<DagDoc, "tasks">): Dag {
  return {
    id: d._id,
    ownerId: d.ownerId,
    name: d.name,
    description: d.description,
    version: d.version,
    tasks: "tasks" in d ? toDagTasks(d.tasks) : null,
    schedule: d.schedule ? toSchedule(d.schedule) : null,
    misfire: d.misfire,
    overlap: d.overlap,
    catchupWindow: formatDuration(d.catchupWindowMs),
    maxParallel: d.maxParallel,
    failFast: d.failFast,
    params: JSON.parse(d.paramsJson) as Record<string, unknown>,
    paused: d.paused,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
    doc: d,
  };
}

export function toDagTasks(tasks: DagDoc["tasks"]): DagTask[] {
  return tasks.map((t) => ({ key: t.key, spec: toSpec(t.spec), dependsOn: t.dependsOn, trigger: t.trigger, retry: toRetry(t.retry), priority: t.priority, mapOver: t.mapOver }));
}

export function toDagRun(r: DagRunSummary): DagRun {
  return {
    id: r._id,
    dagId: r.dagId,
    dagName: r.dagName,
    dagVersion: r.dagVersion,
    status: r.status,
    trigger: r.trigger,
    params: JSON.parse(r.paramsJson) as Record<string, unknown>,
    scheduledFor: r.scheduledFor,
    cancelRequested: r.cancelRequested,
    held: r.held,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    finishedAt: r.finishedAt,
    doc: r,
  };
}

/** A row of `DagRun.tasks` before its run is read: the fire key of the run it shows (none for a mapped task's own row). */
export interface DagRunTaskRow extends Omit<DagRunTask, "run" | "result"> {
  fireKey: string | null;
  /** Its DAG run (not a field: DagRunTask.waiting reads the DAG run by it). */
  dagRunId: string;
}

/**
 * The rows of a DAG run's tasks, in definition order: a task, or a mapped task followed by its
 * instances. A live instance shows its run's state (the document keeps QUEUED until the run ends):
 * `runs` are the task runs' states only, so a page's runs are read whole afterwards, and only its
 * rows' (see {@link withTaskRuns}).
 */
export function dagRunTaskRows(r: Pick<DagRunDoc, "_id" | "tasks"> & { definition: { tasks: ReadonlyArray<Pick<DagRunDoc["definition"]["tasks"][number], "key" | "mapOver">> } }, runs: readonly Pick<RunDoc, "fireKey" | "status">[]): DagRunTaskRow[] {
  const observed = observedStates(r, new Map(runs.map((run) => [run.fireKey, run])));
  const rows: DagRunTaskRow[] = [];
  const row = (key: string, index: number | null, state: DagRunTask["status"], attempt: number, mapped: boolean, note: string | null): DagRunTaskRow => ({
    key,
    dagRunId: r._id,
    mapIndex: index,
    status: state,
    attempt,
    mapped,
    note,
    fireKey: mapped ? null : instanceFireKey(r._id, key, index, attempt),
  });
  for (const def of r.definition.tasks) {
    const t = r.tasks[def.key];
    const v = observed[def.key];
    if (!t || !v) continue;
    if (t.instances === undefined) rows.push(row(def.key, null, v.state, v.attempt, def.mapOver !== null, t.note ?? null));
    else {
      rows.push(row(def.key, null, t.state, t.attempt, true, t.note ?? null));
      v.instances!.forEach((i, index) => rows.push(row(def.key, index, i.state, i.attempt, false, null)));
    }
  }
  return rows;
}

/** The rows with their runs (read whole, by the rows' fire keys) and results. */
export function withTaskRuns(rows: readonly DagRunTaskRow[], runs: readonly RunDoc[], now: number): DagRunTask[] {
  const byKey = new Map(runs.map((run) => [run.fireKey, run]));
  return rows.map(({ fireKey, ...row }) => {
    const run = fireKey === null ? undefined : byKey.get(fireKey);
    return { ...row, run: run ? toRun(run, now) : null, result: run?.resultJson != null ? (JSON.parse(run.resultJson) as unknown) : null };
  });
}

export function dagEventOf(e: DagEvent): DagRunEvent {
  return {
    dagRunId: e.dagRunId,
    dagId: e.dagId,
    status: e.status,
    task: e.task ? { key: e.task.key, mapIndex: e.task.mapIndex, status: e.task.state, attempt: e.task.attempt, runStatus: e.task.runStatus, runId: e.task.runId } : null,
    at: new Date(e.at),
  };
}

/** A task run's own transition as a DAG run event (the DAG run's status as last known: RUNNING while its tasks run). */
export function dagEventOfRun(run: RunEvent, dagId: string): DagRunEvent {
  return {
    dagRunId: run.dagRunId!,
    dagId,
    status: "RUNNING",
    task: { key: run.taskKey!, mapIndex: run.mapIndex ?? null, status: taskStateOfRun(run.status), attempt: Number(run.fireKey.slice(run.fireKey.lastIndexOf("#") + 1)) || 1, runStatus: run.status, runId: run._id },
    at: run.updatedAt,
  };
}
