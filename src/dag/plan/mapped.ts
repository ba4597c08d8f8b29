/**
 * Mapped tasks (dynamic fan-out): how many instances a parent's result gives, and the task's
 * state from its instances' states.
 */
import { DagTaskState } from "../../domain/index.js";
import { isActive, isTerminal } from "./readiness.js";
import type { InstanceView } from "./types.js";

/** Most instances one mapped task may have. */
export const MAX_MAP_INSTANCES = 1_000;

/**
 * Most task instances one DAG run may have, counting a task as one and a mapped task as its
 * instances: one DAG run must not become a million runs (999 tasks mapping over 1,000 elements
 * each), nor a document past MongoDB's 16 MiB (each instance's state is in the DAG run's).
 */
export const MAX_DAG_RUN_INSTANCES = 10_000;

/** The instance count, or why the result cannot be mapped over. */
export type MapCount = { ok: true; count: number } | { ok: false; message: string };

/**
 * How many instances a task mapping over `parentKey` gets from that parent's parsed JSON result:
 * one per element of an array of at most `MAX_MAP_INSTANCES` elements.
 */
export function mapCount(parentKey: string, result: unknown): MapCount {
  if (!Array.isArray(result)) {
    const what = result === undefined ? "no result" : `a JSON ${result === null ? "null" : typeof result}`;
    return {
      ok: false,
      message: `mapOver ${JSON.stringify(parentKey)}: that task's result must be a JSON array; it wrote ${what}`,
    };
  }
  if (result.length > MAX_MAP_INSTANCES) {
    return {
      ok: false,
      message: `mapOver ${JSON.stringify(parentKey)}: the array has ${result.length} elements; a task maps over at most ${MAX_MAP_INSTANCES}`,
    };
  }
  return { ok: true, count: result.length };
}

/** How many task instances a DAG run has now (a task not mapped, or not expanded yet, is one). */
export function instanceTotal(tasks: Readonly<Record<string, { instances?: readonly unknown[] }>>): number {
  let n = 0;
  for (const t of Object.values(tasks)) n += t.instances === undefined ? 1 : t.instances.length;
  return n;
}

/**
 * A mapped task's state from its instances' states: SKIPPED with no instances. While any is not
 * terminal: RUNNING once one is RUNNING, RETRYING or terminal; else QUEUED if one is QUEUED;
 * else PENDING (expanded, waiting for slots). Once all are terminal: FAILED if any FAILED, else
 * CANCELLED if any CANCELLED, else SUCCEEDED.
 */
export function aggregateMapped(instances: readonly InstanceView[]): DagTaskState {
  if (instances.length === 0) return DagTaskState.SKIPPED;
  const states = instances.map((i) => i.state);
  if (!states.every(isTerminal)) {
    if (states.some((s) => s === DagTaskState.RUNNING || s === DagTaskState.RETRYING || isTerminal(s))) {
      return DagTaskState.RUNNING;
    }
    return states.some(isActive) ? DagTaskState.QUEUED : DagTaskState.PENDING;
  }
  if (states.includes(DagTaskState.FAILED)) return DagTaskState.FAILED;
  if (states.includes(DagTaskState.CANCELLED)) return DagTaskState.CANCELLED;
  return DagTaskState.SUCCEEDED;
}
