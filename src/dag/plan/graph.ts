/**
 * The edges of a DAG as indexes, its roots and leaves. Edges run parent → child ("runs before").
 * Unknown parent keys, self-dependencies and duplicate keys are ignored here (validation reports them); the first
 * task of a key wins.
 */
import type { DagDef } from "./types.js";

/** Parents and children of each task by key, in declaration order, each edge once. */
export interface GraphIndex {
  /** Task keys in declaration order, first occurrence of each. */
  keys: string[];
  parents: Map<string, string[]>;
  children: Map<string, string[]>;
  /** Declaration position of each key. */
  position: Map<string, number>;
}

/** Builds the parent and child lists of every task. */
export function indexGraph(dag: DagDef): GraphIndex {
  const keys: string[] = [];
  const position = new Map<string, number>();
  for (const task of dag.tasks) {
    if (position.has(task.key)) continue;
    position.set(task.key, keys.length);
    keys.push(task.key);
  }
  const parents = new Map<string, string[]>(keys.map((k) => [k, []]));
  const children = new Map<string, string[]>(keys.map((k) => [k, []]));
  const seen = new Set<string>();
  for (const task of dag.tasks) {
    if (seen.has(task.key)) continue;
    seen.add(task.key);
    const mine = parents.get(task.key)!;
    const listed = new Set<string>();
    for (const parent of task.dependsOn) {
      if (parent === task.key || !position.has(parent) || listed.has(parent)) continue;
      listed.add(parent);
      mine.push(parent);
    }
  }
  // Children in declaration order of the child.
  for (const key of keys) for (const parent of parents.get(key)!) children.get(parent)!.push(key);
  return { keys, parents, children, position };
}

/** Tasks with no parents, in declaration order. */
export function roots(graph: GraphIndex): string[] {
  return graph.keys.filter((k) => graph.parents.get(k)!.length === 0);
}

/** Tasks with no children, in declaration order. */
export function leaves(graph: GraphIndex): string[] {
  return graph.keys.filter((k) => graph.children.get(k)!.length === 0);
}
