/**
 * DAG workflows (issue #15). plan/: the pure part (validation, topological order, trigger rules,
 * mapped tasks, the step decision, retry from failed, graph rendering); docs/dags.md. engine/:
 * documents to runs and back (advance, sweeper, the DAG and DAG run services, data along edges).
 */
export * from "./engine/index.js";
export { indexGraph, leaves, roots, type GraphIndex } from "./plan/graph.js";
export { aggregateMapped, MAX_DAG_RUN_INSTANCES, MAX_MAP_INSTANCES, mapCount, type MapCount } from "./plan/mapped.js";
export { countParents, countsAsFailed, isActive, isTerminal, Readiness, readiness, type ParentCounts } from "./plan/readiness.js";
export { renderDot, renderGraph, renderMermaid, type StateColours } from "./plan/render.js";
export { retryFromFailed } from "./plan/retry.js";
export { initialStates, step } from "./plan/step.js";
export { findCycles, topologicalOrder } from "./plan/topo.js";
export type {
  DagDef,
  DagProblem,
  DagTaskDef,
  InstanceRef,
  InstanceView,
  StepInput,
  StepResult,
  TaskNote,
  TaskStates,
  TaskView,
} from "./plan/types.js";
export { MAX_DAG_EDGES, MAX_DAG_TASKS, TASK_KEY_PATTERN, validateDag } from "./plan/validate.js";
