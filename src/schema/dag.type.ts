import { Field, ID, Int, ObjectType } from "type-graphql";
import { connectionTypes } from "./common.type.js";
import { DagRunStatus, DagTaskState, MisfirePolicy, OverlapPolicy, RunStatus, RunTrigger, TriggerRule } from "./enums.js";
import { JobSpec, RetryPolicy, Schedule } from "./job.type.js";
import { Run } from "./run.type.js";
import { DateTime, JSONObject, JSONValue } from "./scalars.js";

@ObjectType({ description: "One task of a DAG." })
export class DagTask {
  @Field(() => String)
  key!: string;

  @Field(() => JobSpec)
  spec!: JobSpec;

  @Field(() => [String])
  dependsOn!: string[];

  @Field(() => TriggerRule)
  trigger!: TriggerRule;

  @Field(() => RetryPolicy)
  retry!: RetryPolicy;

  @Field(() => Int)
  priority!: number;

  @Field(() => String, { nullable: true })
  mapOver!: string | null;
}

@ObjectType({ description: "A workflow: tasks that run after other tasks (a directed acyclic graph)." })
export class Dag {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  ownerId!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String, { nullable: true })
  description!: string | null;

  @Field(() => Int, { description: "Bumped by every updateDag; a DAG run shows the version it runs." })
  version!: number;

  /** Null when the DAG was read without its tasks (a listing): DagResolver.tasks reads them then. */
  tasks!: DagTask[] | null;

  @Field(() => Schedule, { nullable: true })
  schedule!: Schedule | null;

  @Field(() => MisfirePolicy)
  misfire!: MisfirePolicy;

  @Field(() => OverlapPolicy)
  overlap!: OverlapPolicy;

  @Field(() => String)
  catchupWindow!: string;

  @Field(() => Int, { nullable: true })
  maxParallel!: number | null;

  @Field(() => Boolean)
  failFast!: boolean;

  @Field(() => JSONObject)
  params!: Record<string, unknown>;

  @Field(() => Boolean)
  paused!: boolean;

  @Field(() => DateTime)
  createdAt!: Date;

  @Field(() => DateTime)
  updatedAt!: Date;

  /** The stored document (without its tasks when `tasks` is null), for the field resolvers (tasks, topologicalOrder, graph, runs). */
  doc!: unknown;
}

/** A page of Dag objects (Relay). */
export const { Edge: DagEdge, Connection: DagConnection } = connectionTypes(Dag, "Dag");
export type DagConnection = InstanceType<typeof DagConnection>;

@ObjectType({ description: "A task of a DAG run, or one instance of a mapped task (mapIndex set)." })
export class DagRunTask {
  @Field(() => String)
  key!: string;

  @Field(() => Int, { nullable: true, description: "A mapped task's instance: its index in the parent's array. Null for the task itself." })
  mapIndex!: number | null;

  @Field(() => DagTaskState, { description: "While its run is live, the run's state (QUEUED, RUNNING, RETRYING)." })
  status!: DagTaskState;

  @Field(() => Int, { description: "1, bumped by every retryDagRun that re-runs it." })
  attempt!: number;

  @Field(() => Boolean, { description: "A mapped task (its instances follow it in `tasks`)." })
  mapped!: boolean;

  @Field(() => String, { nullable: true, description: "Why it ended without running, when that needs saying." })
  note!: string | null;

  @Field(() => Run, { nullable: true, description: "Its run (this attempt): null before it started, and for a mapped task's own row." })
  run!: Run | null;

  @Field(() => JSONValue, { nullable: true, description: "The JSON it wrote to KAIROS_RESULT, once it succeeded." })
  result!: unknown;
}

/** A page of a DAG run's task rows (Relay): `DagRun.tasks`. */
export const { Edge: DagRunTaskEdge, Connection: DagRunTaskConnection } = connectionTypes(DagRunTask, "DagRunTask");
export type DagRunTaskConnection = InstanceType<typeof DagRunTaskConnection>;

@ObjectType({ description: "One run of a DAG: every task's state, and each task instance's run." })
export class DagRun {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  dagId!: string;

  @Field(() => String)
  dagName!: string;

  @Field(() => Int, { description: "The DAG version this run runs (later updates do not change it)." })
  dagVersion!: number;

  @Field(() => DagRunStatus)
  status!: DagRunStatus;

  @Field(() => RunTrigger)
  trigger!: RunTrigger;

  @Field(() => JSONObject)
  params!: Record<string, unknown>;

  @Field(() => DateTime)
  scheduledFor!: Date;

  @Field(() => Boolean)
  cancelRequested!: boolean;

  @Field(() => Boolean, { description: "Held behind a running DAG run of the same DAG (overlap QUEUE_ONE)." })
  held!: boolean;

  @Field(() => DateTime)
  createdAt!: Date;

  @Field(() => DateTime)
  updatedAt!: Date;

  @Field(() => DateTime, { nullable: true })
  finishedAt!: Date | null;

  /** The document's task states, for the `tasks` field resolver. */
  doc!: unknown;
}

/** A page of DagRun objects (Relay). */
export const { Edge: DagRunEdge, Connection: DagRunConnection } = connectionTypes(DagRun, "DagRun");
export type DagRunConnection = InstanceType<typeof DagRunConnection>;

@ObjectType({ description: "A change of a task instance of a DAG run." })
export class DagRunTaskEvent {
  @Field(() => String)
  key!: string;

  @Field(() => Int, { nullable: true })
  mapIndex!: number | null;

  @Field(() => DagTaskState)
  status!: DagTaskState;

  @Field(() => Int)
  attempt!: number;

  @Field(() => RunStatus, { nullable: true, description: "Set when the change is its run's own (QUEUED, RUNNING, …)." })
  runStatus!: RunStatus | null;

  @Field(() => ID, { nullable: true })
  runId!: string | null;
}

@ObjectType({ description: "A change in a DAG run: one task instance's, or the DAG run's status alone (task null)." })
export class DagRunEvent {
  @Field(() => ID)
  dagRunId!: string;

  @Field(() => ID)
  dagId!: string;

  @Field(() => DagRunStatus)
  status!: DagRunStatus;

  @Field(() => DagRunTaskEvent, { nullable: true, description: "Null for the DAG run's own status: its end, and (with dagRunId) the first event, its status when you subscribed." })
  task!: DagRunTaskEvent | null;

  @Field(() => DateTime)
  at!: Date;
}
