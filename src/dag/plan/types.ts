/**
 * The shapes the pure DAG planning code works on. They carry only what planning needs: the
 * engine's documents hold more (specs, runs, results) and map onto these.
 */
import type { DagRunStatus, DagTaskState, TriggerRule } from "../../domain/index.js";

/** One task of a DAG definition, as far as the graph is concerned. */
export interface DagTaskDef {
  /** Unique within the DAG; see `TASK_KEY_PATTERN`. */
  key: string;
  /** Keys of the parents: this task runs after them, as its trigger rule says. */
  dependsOn: readonly string[];
  /** @default TriggerRule.ALL_SUCCESS */
  trigger?: TriggerRule;
  /** Dynamic fan-out: one instance per element of this parent's JSON array result. */
  mapOver?: string;
  /** Higher starts first when more tasks are ready than `maxParallel` allows (0..9 as jobs). @default 0 */
  priority?: number;
}

/** A DAG definition: its tasks in declaration order (the order breaks ties everywhere). */
export interface DagDef {
  tasks: readonly DagTaskDef[];
}

/** One problem found in a DAG definition: where (e.g. `tasks[2].dependsOn[0]`) and what. */
export interface DagProblem {
  path: string;
  message: string;
}

/** One instance of a mapped task. */
export interface InstanceView {
  state: DagTaskState;
  /** Starts at 1; `retryFromFailed` bumps it for an instance it resets. */
  attempt: number;
}

/** The state of one task in a DAG run. */
export interface TaskView {
  /** For a mapped task: the aggregate of its instances (`aggregateMapped`). */
  state: DagTaskState;
  /** Starts at 1; `retryFromFailed` bumps it for a task it resets. */
  attempt: number;
  /**
   * A mapped task only: its instances, set by `step` when the task is expanded (its parent's
   * result known); absent before.
   */
  instances?: InstanceView[];
}

/** The states of every task of a DAG run, by key. */
export type TaskStates = Readonly<Record<string, TaskView>>;

/**
 * One task instance to start (or cancel). The engine derives the run's id from it
 * deterministically (DAG run id, key, index, attempt), so a start decided twice is created once.
 */
export interface InstanceRef {
  key: string;
  /** The instance's index for a mapped task; null for a plain task. */
  index: number | null;
  attempt: number;
}

/** What `step` decides from. */
export interface StepInput {
  dag: DagDef;
  tasks: TaskStates;
  /**
   * The parsed JSON results of the parents that mapped tasks map over, by parent key (only
   * read once that parent SUCCEEDED; for a mapped parent, the array of its instances' results).
   * A missing entry is refused like a result that is not an array.
   */
  mapSources?: Readonly<Record<string, unknown>>;
  /** On the first FAILED task or instance, cancel the rest (docs/dags.md). @default false */
  failFast?: boolean;
  /** At most this many instances QUEUED, RUNNING or RETRYING at once; null: no limit. @default null */
  maxParallel?: number | null;
  /** The user cancelled the DAG run. @default false */
  cancelled?: boolean;
}

/** Why `step` moved a task to a terminal state without running it, when that needs saying. */
export interface TaskNote {
  key: string;
  message: string;
}

/** What `step` decided. */
export interface StepResult {
  /** Every task's new state (unchanged ones too). */
  tasks: Record<string, TaskView>;
  /** Keys whose view differs from the input's, in topological order: the engine writes these. */
  changed: string[];
  /** Instances to start now, best first; each is QUEUED in `tasks`. */
  start: InstanceRef[];
  /**
   * Active instances (QUEUED, RUNNING, RETRYING) to cancel: repeated on every call while they are
   * active, since cancelling a run is idempotent. Their state stays as it is until their run ends.
   */
  cancel: InstanceRef[];
  /** Tasks failed or skipped here with a reason (e.g. a map over something not an array). */
  notes: TaskNote[];
  /** RUNNING until every task is terminal. */
  status: DagRunStatus;
}
