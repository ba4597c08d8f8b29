import { RunUsage } from "./resources.type.js";
import { HttpResponse } from "./job-kinds.type.js";
import { Field, ID, Int, ObjectType } from "type-graphql";
import { connectionTypes } from "./common.type.js";
import { RunStatus, RunTrigger } from "./enums.js";
import { DateTime } from "./scalars.js";

@ObjectType({ description: "One status change of a run." })
export class RunTransition {
  @Field(() => RunStatus)
  status!: RunStatus;

  @Field(() => DateTime)
  at!: Date;

  @Field(() => String, { nullable: true })
  reason!: string | null;

  @Field(() => String, { nullable: true })
  nodeId!: string | null;

  @Field(() => Int, { nullable: true })
  attempt!: number | null;
}

@ObjectType({ description: "One fire of a job and its attempts." })
export class Run {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  jobId!: string;

  @Field(() => String)
  jobName!: string;

  @Field(() => RunStatus)
  status!: RunStatus;

  @Field(() => RunTrigger)
  trigger!: RunTrigger;

  @Field(() => String, { description: "`jobId@<slot ms>` for scheduled fires; unique." })
  fireKey!: string;

  @Field(() => Int, { description: "1-based attempt number of the current or last attempt." })
  attempt!: number;

  @Field(() => Int)
  maxAttempts!: number;

  @Field(() => Int, { description: "Bumped by every claim; exposed to the program as KAIROS_FENCING_TOKEN." })
  fencingToken!: number;

  @Field(() => Int)
  priority!: number;

  @Field(() => String)
  pool!: string;

  @Field(() => DateTime, { description: "The slot this run is for (its nominal fire time)." })
  scheduledFor!: Date;

  @Field(() => DateTime, {
    nullable: true,
    description:
      "Set on a run staged ahead of its fire time (KAIROS_STAGE_AHEAD): no executor takes it before this instant (scheduledFor with spread and jitter). " +
      "Until then it reads SCHEDULED.",
  })
  notBefore!: Date | null;

  @Field(() => DateTime, { nullable: true })
  queuedAt!: Date | null;

  @Field(() => DateTime, { nullable: true })
  startedAt!: Date | null;

  @Field(() => DateTime, { nullable: true })
  finishedAt!: Date | null;

  @Field(() => DateTime, { nullable: true, description: "When RETRY_SCHEDULED: when the next attempt is due." })
  retryAt!: Date | null;

  @Field(() => Int, { nullable: true })
  durationMs!: number | null;

  @Field(() => Int, { nullable: true })
  exitCode!: number | null;

  @Field(() => String, {
    nullable: true,
    description:
      "The signal that ended the last attempt: the one it died of, or the one Kairos sent to stop it (a timeout or a cancel: SIGTERM, then SIGKILL after the grace period), also when the program caught it and exited itself (exitCode then says how).",
  })
  signal!: string | null;

  @Field(() => String, { nullable: true })
  error!: string | null;

  @Field(() => ID, { nullable: true })
  nodeId!: string | null;

  @Field(() => ID, { nullable: true, description: "Set for a DAG task's run: its DAG run (Query.dagRun)." })
  dagRunId!: string | null;

  @Field(() => String, { nullable: true, description: "Set for a DAG task's run: the key of its task in the DAG." })
  taskKey!: string | null;

  @Field(() => String, { nullable: true, description: "The last 16 KiB of combined stdout and stderr." })
  outputTail!: string | null;

  @Field(() => Boolean, {
    description:
      "True when some of the last attempt's output was dropped: it printed more than its log keeps (KAIROS_LOG_MAX_BYTES; logStatus.truncated says the same). outputTail is the last 16 KiB either way; the whole output is the log (Run.logs). On a node that keeps no log, true when output before the tail was dropped.",
  })
  outputTruncated!: boolean;

  @Field(() => RunUsage, { nullable: true, description: "What the last attempt used (peak memory, CPU seconds), where its node measures it." })
  usage!: RunUsage | null;

  @Field(() => HttpResponse, { nullable: true, description: "HTTP jobs: what the last attempt's request got back (null: no response, or not an HTTP job)." })
  httpResponse!: HttpResponse | null;

  @Field(() => Boolean)
  cancelRequested!: boolean;

  @Field(() => [RunTransition])
  history!: RunTransition[];

  @Field(() => DateTime)
  createdAt!: Date;

  @Field(() => DateTime)
  updatedAt!: Date;

  /** The stored run or event it was mapped from (not a field): Run.waiting decides from it without reading the run again. */
  source?: unknown;
}

/** A page of Run objects (Relay). */
export const { Edge: RunEdge, Connection: RunConnection } = connectionTypes(Run, "Run");
export type RunConnection = InstanceType<typeof RunConnection>;

@ObjectType({ description: "Why one id of a bulk run mutation (cancelRuns, retryRuns) was not done." })
export class BulkRunError {
  @Field(() => String, { description: "As extensions.code of an error: NOT_FOUND, FAILED_PRECONDITION, ABORTED, RESOURCE_EXHAUSTED, BAD_USER_INPUT, RATE_LIMITED, FORBIDDEN, INTERNAL_SERVER_ERROR." })
  code!: string;

  @Field(() => String, { description: "The message cancelRun or retryRun would have answered for this id." })
  message!: string;
}

@ObjectType({ description: "One id of a bulk run mutation: the run as the mutation left it, or why it was not done (one of the two is set)." })
export class BulkRunResult {
  @Field(() => ID)
  id!: string;

  @Field(() => Run, { nullable: true })
  run!: Run | null;

  @Field(() => BulkRunError, { nullable: true })
  error!: BulkRunError | null;
}
