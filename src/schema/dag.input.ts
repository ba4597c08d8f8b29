import { Field, InputType, Int } from "type-graphql";
import { MisfirePolicy, OverlapPolicy, TriggerRule } from "./enums.js";
import { JobSpecInput, RetryInput, ScheduleInput } from "./job.input.js";
import { JSONObject } from "./scalars.js";

@InputType({ description: "One task of a DAG: what runs (the same spec as a job's) and after which tasks." })
export class DagTaskInput {
  @Field(() => String, { description: "Unique in the DAG: a letter, then up to 63 letters, digits, '_' or '-'." })
  key!: string;

  @Field(() => JobSpecInput)
  spec!: JobSpecInput;

  @Field(() => [String], { nullable: true, description: "Keys of the tasks this one runs after." })
  dependsOn?: string[] | null;

  @Field(() => TriggerRule, { nullable: true, description: "Default ALL_SUCCESS." })
  trigger?: TriggerRule | null;

  @Field(() => RetryInput, { nullable: true })
  retry?: RetryInput | null;

  @Field(() => Int, { nullable: true, description: "0 (lowest) to 9 (highest), default 5: the queue priority of its runs among this user's queued runs, and the order under maxParallel." })
  priority?: number | null;

  @Field(() => String, {
    nullable: true,
    description: "A parent's key (one of dependsOn): one instance of this task per element of that parent's JSON array result (at most 1000).",
  })
  mapOver?: string | null;
}

@InputType()
export class CreateDagInput {
  @Field(() => String, { description: "Unique among your DAGs." })
  name!: string;

  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field(() => [DagTaskInput], { description: "1 to 1000 tasks, no cycle." })
  tasks!: DagTaskInput[];

  @Field(() => ScheduleInput, { nullable: true, description: "Fire DAG runs on a schedule, like a job's; none: triggered only." })
  schedule?: ScheduleInput | null;

  @Field(() => MisfirePolicy, { nullable: true })
  misfire?: MisfirePolicy | null;

  @Field(() => OverlapPolicy, { nullable: true, description: "Scheduled DAG runs against a DAG run still RUNNING." })
  overlap?: OverlapPolicy | null;

  @Field(() => String, { nullable: true })
  catchupWindow?: string | null;

  @Field(() => Int, { nullable: true, description: "At most this many task instances queued or running at once in one DAG run." })
  maxParallel?: number | null;

  @Field(() => Boolean, { nullable: true, description: "On the first failed task, cancel the rest. Default false." })
  failFast?: boolean | null;

  @Field(() => JSONObject, { nullable: true, description: "Default params (at most 64 KiB of JSON); every task reads them at KAIROS_PARAMS." })
  params?: Record<string, unknown> | null;

  @Field(() => Boolean, { nullable: true, description: "Create it with its schedule paused." })
  paused?: boolean | null;
}

@InputType({ description: "Only the fields given change; the DAG gets a new version. DAG runs in flight keep theirs." })
export class UpdateDagInput {
  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field(() => [DagTaskInput], { nullable: true })
  tasks?: DagTaskInput[] | null;

  @Field(() => ScheduleInput, { nullable: true, description: "A new schedule (the DAG gets one if it had none). Null or absent: unchanged, as in updateJob." })
  schedule?: ScheduleInput | null;

  @Field(() => Boolean, {
    nullable: true,
    description:
      "true: remove the schedule (no more fires; DAG runs in flight, and one waiting under QUEUE_ONE, carry on). Not together with schedule. " +
      "misfire, overlap and catchupWindow are kept for a schedule given later.",
  })
  clearSchedule?: boolean | null;

  @Field(() => MisfirePolicy, { nullable: true })
  misfire?: MisfirePolicy | null;

  @Field(() => OverlapPolicy, { nullable: true })
  overlap?: OverlapPolicy | null;

  @Field(() => String, { nullable: true })
  catchupWindow?: string | null;

  @Field(() => Int, { nullable: true })
  maxParallel?: number | null;

  @Field(() => Boolean, { nullable: true })
  failFast?: boolean | null;

  @Field(() => JSONObject, { nullable: true })
  params?: Record<string, unknown> | null;
}
