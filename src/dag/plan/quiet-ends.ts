/**
 * Ends that decide nothing but their own state ("quiet" ends), so that the engine may record
 * them with one conditional write instead of a step (engine/quiet-writes.ts): the success of a task
 * while each of its children still waits for another parent, under a rule that gives a verdict
 * only once every parent has ended. The write's conditions (its children's counts of unended
 * parents, `openParents`, kept in the DAG run by every step) make it apply only while that holds.
 */
import { TriggerRule } from "../../domain/index.js";
import type { GraphIndex } from "./graph.js";
import { isTerminal } from "./readiness.js";
import type { DagDef, TaskView } from "./types.js";

/**
 * Rules under which a parent's success changes a waiting child's verdict only when it is the last
 * parent to end (readiness.ts): ALL_SUCCESS and NONE_FAILED decide early only on a failure,
 * ALL_DONE never. ONE_SUCCESS runs on the first success, ALL_FAILED is skipped by it.
 */
const DECIDED_BY_THE_LAST: ReadonlySet<TriggerRule> = new Set([TriggerRule.ALL_SUCCESS, TriggerRule.ALL_DONE, TriggerRule.NONE_FAILED]);

/**
 * The children whose unended-parent counts a success of `key` lowers, when such a success can be
 * quiet; null when it cannot: a task without children (its end may end the DAG run), one with a
 * child under another rule, or one with a child it is the only parent of (that child never waits
 * for another parent: a step of a chain, whose quiet write would always be refused, a round trip
 * before the round its end needs). Whether each child still waits for another parent is the
 * write's to check (its count above the number of its parents ending in that write).
 */
export function quietSuccessChildren(dag: DagDef, graph: GraphIndex, key: string): string[] | null {
  const children = graph.children.get(key) ?? [];
  if (children.length === 0) return null;
  if (children.some((c) => (graph.parents.get(c)?.length ?? 0) < 2)) return null;
  const rules = new Map(dag.tasks.map((t) => [t.key, t.trigger ?? TriggerRule.ALL_SUCCESS]));
  return children.every((c) => DECIDED_BY_THE_LAST.has(rules.get(c)!)) ? children : null;
}

/** How many of the task's parents have not ended, by task (tasks without parents: none). */
export function openParentCounts(graph: GraphIndex, tasks: Readonly<Record<string, Pick<TaskView, "state">>>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [key, parents] of graph.parents) {
    if (parents.length > 0) out.set(key, parents.filter((p) => !isTerminal(tasks[p]!.state)).length);
  }
  return out;
}
