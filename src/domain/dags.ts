/**
 * The states and options of DAG workflows (issue #15), as `as const` objects. The rules that move
 * task instances between these states are pure code in src/dag/plan/ (docs/dags.md, "Trigger
 * rules and run states").
 */

/**
 * When a task runs, given the states of its parents (Airflow's trigger rules). A CANCELLED parent
 * counts as failed. A task with no parents runs at once whatever its rule.
 */
export const TriggerRule = {
  /** Run when every parent SUCCEEDED. @default */
  ALL_SUCCESS: "ALL_SUCCESS",
  /** Run when every parent is terminal, whatever its state. */
  ALL_DONE: "ALL_DONE",
  /** Run when every parent FAILED, UPSTREAM_FAILED or CANCELLED. */
  ALL_FAILED: "ALL_FAILED",
  /** Run as soon as one parent SUCCEEDED. */
  ONE_SUCCESS: "ONE_SUCCESS",
  /** Run as soon as one parent FAILED, UPSTREAM_FAILED or CANCELLED. */
  ONE_FAILED: "ONE_FAILED",
  /** Run when every parent is terminal and none FAILED, UPSTREAM_FAILED or CANCELLED. */
  NONE_FAILED: "NONE_FAILED",
} as const;
export type TriggerRule = (typeof TriggerRule)[keyof typeof TriggerRule];

/**
 * The state of one task (or one instance of a mapped task) in a DAG run.
 * - `PENDING`: not started; waiting for its parents, or for a slot under `maxParallel`.
 * - `QUEUED`, `RUNNING`, `RETRYING`: its run exists and is not finished (the run's own states).
 * - `SUCCEEDED`, `FAILED`: its run ended so (a mapped task: its instances, see docs/dags.md).
 * - `UPSTREAM_FAILED`: never run, its trigger rule can no longer be met because of failed parents.
 * - `SKIPPED`: never run, its trigger rule says skip (e.g. a skipped parent, or a successful
 *   parent under ALL_FAILED), or a mapped task over an empty list.
 * - `CANCELLED`: cancelled by the user or by `failFast`, before or while running.
 */
export const DagTaskState = {
  PENDING: "PENDING",
  QUEUED: "QUEUED",
  RUNNING: "RUNNING",
  RETRYING: "RETRYING",
  SUCCEEDED: "SUCCEEDED",
  FAILED: "FAILED",
  UPSTREAM_FAILED: "UPSTREAM_FAILED",
  SKIPPED: "SKIPPED",
  CANCELLED: "CANCELLED",
} as const;
export type DagTaskState = (typeof DagTaskState)[keyof typeof DagTaskState];

/** A DAG run: RUNNING until no task can move any more, then one of the three terminal states. */
export const DagRunStatus = {
  RUNNING: "RUNNING",
  SUCCEEDED: "SUCCEEDED",
  FAILED: "FAILED",
  CANCELLED: "CANCELLED",
} as const;
export type DagRunStatus = (typeof DagRunStatus)[keyof typeof DagRunStatus];

/** The text formats a DAG's graph is rendered in. */
export const GraphFormat = { MERMAID: "MERMAID", DOT: "DOT" } as const;
export type GraphFormat = (typeof GraphFormat)[keyof typeof GraphFormat];
