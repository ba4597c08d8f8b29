/**
 * Validation of a DAG definition's graph: every problem at once, each with its path and a message
 * saying what is wrong and what is allowed. Task specs are checked elsewhere (the engine reuses
 * the job spec validation).
 */
import { TriggerRule } from "../../domain/index.js";
import { indexGraph } from "./graph.js";
import { findCycles } from "./topo.js";
import type { DagDef, DagProblem } from "./types.js";

/** Most tasks a DAG may have. */
export const MAX_DAG_TASKS = 1_000;

/**
 * Most dependencies (dependsOn entries of all tasks together) a DAG may have. Every advance of a
 * DAG run walks them all (step, ~0.5 µs an edge): 1,000 tasks each on their 330 predecessors, 275,000
 * edges in a 2 MiB request, cost ~150 ms of the engine's CPU per advance and a thousand advances a
 * DAG run, taken from every other user's DAG runs on that process.
 */
export const MAX_DAG_EDGES = 20_000;

/**
 * A task key: a letter, then up to 63 letters, digits, `_` or `-`. Keys name tasks in messages,
 * graphs, environment variables and run ids, so they are kept plain.
 */
export const TASK_KEY_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

const TRIGGERS = new Set<string>(Object.values(TriggerRule));

/** What a mapped instance's KAIROS_INPUTS holds besides its parents' results (src/dag/engine/io.ts). */
const MAPPED_INPUT_NAMES: ReadonlySet<string> = new Set(["item", "index"]);

/**
 * Every problem of the definition's graph, in a stable order; empty when it is valid. Over
 * `MAX_DAG_TASKS` tasks or `MAX_DAG_EDGES` dependencies, only that problem is reported.
 */
export function validateDag(dag: DagDef): DagProblem[] {
  if (dag.tasks.length === 0) {
    return [{ path: "tasks", message: "a DAG needs at least one task" }];
  }
  // Past the cap, per-task messages would be thousands of lines of noise: say only this.
  if (dag.tasks.length > MAX_DAG_TASKS) {
    return [{ path: "tasks", message: `a DAG has at most ${MAX_DAG_TASKS} tasks; this one has ${dag.tasks.length}` }];
  }
  const edges = dag.tasks.reduce((n, t) => n + t.dependsOn.length, 0);
  if (edges > MAX_DAG_EDGES) {
    return [{ path: "tasks", message: `a DAG has at most ${MAX_DAG_EDGES} dependencies (dependsOn entries of all tasks together); this one has ${edges}` }];
  }
  const problems: DagProblem[] = [];
  const keys = new Set(dag.tasks.map((t) => t.key));
  const firstAt = new Map<string, number>();
  dag.tasks.forEach((task, i) => {
    problems.push(...taskProblems(dag, i, keys, firstAt));
    if (!firstAt.has(task.key)) firstAt.set(task.key, i);
  });
  for (const cycle of findCycles(indexGraph(dag))) {
    problems.push({
      path: `tasks[${firstAt.get(cycle[0]!)}].dependsOn`,
      message: `dependsOn makes a cycle: ${cycle.join(" → ")}; a DAG must have none`,
    });
  }
  return problems;
}

function taskProblems(dag: DagDef, i: number, keys: Set<string>, firstAt: Map<string, number>): DagProblem[] {
  const task = dag.tasks[i]!;
  const at = `tasks[${i}]`;
  const problems: DagProblem[] = [];
  if (!TASK_KEY_PATTERN.test(task.key)) {
    problems.push({
      path: `${at}.key`,
      message: `task key ${quote(task.key)} is not allowed: a key is a letter followed by up to 63 letters, digits, '_' or '-'`,
    });
  }
  const earlier = firstAt.get(task.key);
  if (earlier !== undefined) {
    problems.push({
      path: `${at}.key`,
      message: `task key ${quote(task.key)} is used twice (tasks[${earlier}] and ${at}); keys must be unique`,
    });
  }
  const listed = new Set<string>();
  task.dependsOn.forEach((parent, j) => {
    const where = `${at}.dependsOn[${j}]`;
    if (parent === task.key) {
      problems.push({ path: where, message: `task ${quote(task.key)} depends on itself; a task may depend only on other tasks` });
    } else if (!keys.has(parent)) {
      problems.push({
        path: where,
        message: `task ${quote(task.key)} depends on ${quote(parent)}, which is not a task of this DAG`,
      });
    } else if (listed.has(parent)) {
      problems.push({ path: where, message: `task ${quote(task.key)} lists ${quote(parent)} twice in dependsOn` });
    }
    listed.add(parent);
  });
  if (task.trigger !== undefined && !TRIGGERS.has(task.trigger)) {
    problems.push({
      path: `${at}.trigger`,
      message: `task ${quote(task.key)} has trigger ${quote(String(task.trigger))}; allowed: ${[...TRIGGERS].join(", ")}`,
    });
  }
  if (task.mapOver !== undefined && !task.dependsOn.includes(task.mapOver)) {
    problems.push({
      path: `${at}.mapOver`,
      message: `task ${quote(task.key)} maps over ${quote(task.mapOver)}, which is not in its dependsOn; mapOver names one of the task's own parents`,
    });
  }
  if (task.mapOver !== undefined) {
    task.dependsOn.forEach((parent, j) => {
      if (!MAPPED_INPUT_NAMES.has(parent)) return;
      problems.push({
        path: `${at}.dependsOn[${j}]`,
        message:
          `task ${quote(task.key)} maps over ${quote(task.mapOver!)} and depends on ${quote(parent)}: a mapped instance's KAIROS_INPUTS has ` +
          `"item" (its element) and "index" of its own, so a mapped task's parents cannot be named "item" or "index"; rename that task`,
      });
    });
  }
  return problems;
}

/** A key inside a message, quoted; long or odd keys shortened so a message stays readable. */
function quote(key: string): string {
  const shown = key.length > 80 ? `${key.slice(0, 80)}…` : key;
  return JSON.stringify(shown);
}
