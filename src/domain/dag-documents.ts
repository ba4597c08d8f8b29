/**
 * The documents of DAG workflows (issue #15; docs/dags.md): a DAG (its definition, versioned) and
 * a DAG run (a snapshot of the definition it runs and every task's state, in one document so that
 * advancing it is one compare-and-set). A task instance's run is an ordinary RunDoc carrying
 * `dagRunId`, `taskKey` and `mapIndex`.
 */
import type { DagRunStatus, DagTaskState, TriggerRule } from "./dags.js";
import type { JobSpec } from "./documents.js";
import type { MisfirePolicy, OverlapPolicy, RetryPolicy, Schedule } from "./policies.js";
import type { RunTrigger } from "./statuses.js";

/** One task of a DAG as stored: what runs (a job's spec), after what, and how. */
export interface DagTaskDoc {
  key: string;
  spec: JobSpec;
  dependsOn: string[];
  trigger: TriggerRule;
  retry: RetryPolicy;
  /** 0..9, as a job's: the ready-queue priority of its runs, and the order under maxParallel. */
  priority: number;
  /** Dynamic fan-out: one instance per element of this parent's JSON array result. */
  mapOver: string | null;
}

export interface DagDoc {
  _id: string;
  ownerId: string;
  /** Unique per owner. */
  name: string;
  description: string | null;
  /** 1, bumped by every updateDag; a DAG run keeps the version (and definition) it started with. */
  version: number;
  tasks: DagTaskDoc[];
  /** Fires like a job's schedule through the DAG's timer job (`_id` = the DAG's id); null: triggered only. */
  schedule: Schedule | null;
  misfire: MisfirePolicy;
  overlap: OverlapPolicy;
  catchupWindowMs: number;
  /** At most this many task instances queued or running at once in one DAG run; null: no limit. */
  maxParallel: number | null;
  /** On the first failed task, cancel the rest of the DAG run. */
  failFast: boolean;
  /** Default params, as JSON text (an object); a trigger's params are merged over them. */
  paramsJson: string;
  paused: boolean;
  pausedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One instance of a mapped task in a DAG run. */
export interface DagInstanceDoc {
  state: DagTaskState;
  attempt: number;
}

/** One task's state in a DAG run (see src/dag/plan/types.ts TaskView, which this extends). */
export interface DagRunTaskDoc {
  state: DagTaskState;
  attempt: number;
  /** A mapped task, once its parent's result is known: its instances. */
  instances?: DagInstanceDoc[];
  /**
   * A mapped task: how many of its stored instances have not ended. An instance's success while
   * others remain is recorded by one conditional write that decrements it (DagAdvancer's quick
   * path); the write that ends the last one is a full advance. Absent (an older or a retried DAG
   * run): the next advance writes it, and until then every end takes the full advance.
   */
  open?: number;
  /**
   * A task with parents: how many of them have not ended (as stored). A parent's success that
   * leaves it above zero decides nothing for this task under rules decided by the last parent
   * (src/dag/plan/quiet-ends.ts), and is recorded by one conditional write that lowers it.
   * Absent (an older or a retried DAG run): the next advance writes it.
   */
  openParents?: number;
  /** Why the task ended without running, when that needs saying (e.g. a map over something not an array). */
  note?: string | null;
}

/** What a DAG run runs: the definition as it was when the run was created. */
export interface DagDefinitionSnapshot {
  tasks: DagTaskDoc[];
  failFast: boolean;
  maxParallel: number | null;
}

/**
 * One version of a DAG's definition, stored once (`<dagId>@<version>`) and shared by every DAG run
 * of that version: written when the version's first DAG run is made, never changed, deleted with
 * its owner, or once no DAG run reads it and it is not its DAG's current version (the retention
 * sweep, src/dag/engine/retention.ts). (Each DAG run used to carry a copy, up to ~2 MiB, in its own
 * document; docs/decisions.md, "A DAG run reads its definition by version".)
 */
export interface DagDefinitionDoc {
  /** `<dagId>@<version>` (dagDefinitionId). */
  _id: string;
  dagId: string;
  ownerId: string;
  version: number;
  definition: DagDefinitionSnapshot;
  createdAt: Date;
  /** When the retention sweep first found it unused (no DAG run of its version, not its DAG's current version); deleted a grace after. */
  retiredAt?: Date;
}

/** The id of a DAG version's stored definition. */
export const dagDefinitionId = (dagId: string, version: number): string => `${dagId}@${version}`;

export interface DagRunDoc {
  _id: string;
  dagId: string;
  dagName: string;
  dagVersion: number;
  ownerId: string;
  /** The definition it runs (its DAG's at `dagVersion`): stored apart, once per version (StoredDagRun). */
  definition: DagDefinitionSnapshot;
  /**
   * The definition's `maxParallel`, in the run's own document for the conditional writes that
   * must not apply under it (recordQuietSuccesses). Absent in DAG runs older than it (their
   * `definition` copy has it).
   */
  maxParallel?: number | null;
  /** The params of this run (the DAG's defaults with the trigger's over them), as JSON text. */
  paramsJson: string;
  status: DagRunStatus;
  /** Every task's state, by task key. */
  tasks: Record<string, DagRunTaskDoc>;
  /** Bumped by every write: advancing is a compare-and-set on it. */
  version: number;
  trigger: RunTrigger;
  /** `dagId@<slot ms>` (schedule) or `dagId@manual:<id>` (trigger, backfill): unique, so a fire or a trigger makes one run. */
  fireKey: string;
  scheduledFor: Date;
  /** A scheduled run staged ahead: its first tasks are not taken before this instant. */
  notBefore: Date | null;
  /** Held behind an active run of the same DAG (overlap QUEUE_ONE): no task starts until it takes the DAG's lock. */
  held: boolean;
  /** The DAG's timer job when the run came from its schedule and holds its overlap lock; null otherwise. */
  lockJobId: string | null;
  cancelRequested: boolean;
  /** When the sweeper may look at this run next (it re-advances running runs whose task runs moved). */
  sweepAt: Date;
  /** When a sweeper last advanced it in a full round (absent: never; its creation counts). */
  sweptAt?: Date;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

/**
 * A DAG run as the `dagRuns` collection holds it: without its definition, which is read by its
 * `dagId` and `dagVersion` (DagDefinitionDoc). DAG runs written before that kept a copy in
 * `definition`, still read where present.
 */
export type StoredDagRun = Omit<DagRunDoc, "definition"> & { definition?: DagDefinitionSnapshot };

/**
 * A DAG run as the reads that skip its definition and task states return it (a status poll, a
 * listing, the answer to a trigger, cancel or retry): both are there only when it was read whole.
 */
export type DagRunSummary = Omit<DagRunDoc, "definition" | "tasks"> & Partial<Pick<DagRunDoc, "definition" | "tasks">>;
