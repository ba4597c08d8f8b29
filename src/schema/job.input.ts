import { ResourcesInput } from "./resources.type.js";
import { Field, Float, ID, InputType, Int } from "type-graphql";
import {
  BackoffKind,
  DstGapPolicy,
  DstRepeatPolicy,
  JobStatus,
  MisfirePolicy,
  OverlapPolicy,
  RetryJitter,
  ScheduleKind,
  SpecKind,
  NetworkAccess,
  RunStatus,
} from "./enums.js";
import { DateTime, JSONObject } from "./scalars.js";

@InputType({
  description:
    "ONCE: now (no at/delay), at an instant (`at`) or after a delay (`delay`); INTERVAL: `every`; CRON: `cron` with optional `timezone`.",
})
export class ScheduleInput {
  @Field(() => ScheduleKind)
  kind!: ScheduleKind;

  @Field(() => DateTime, { nullable: true })
  at?: Date | null;

  @Field(() => String, { nullable: true, description: "ISO-8601 duration, e.g. PT10S." })
  delay?: string | null;

  @Field(() => String, { nullable: true, description: "ISO-8601 duration, at least PT1S." })
  every?: string | null;

  @Field(() => String, { nullable: true })
  cron?: string | null;

  @Field(() => String, { nullable: true, description: "IANA zone, default UTC." })
  timezone?: string | null;

  @Field(() => DateTime, { nullable: true })
  startAt?: Date | null;

  @Field(() => DateTime, { nullable: true })
  endAt?: Date | null;

  @Field(() => Int, { nullable: true })
  maxFires?: number | null;

  @Field(() => DstGapPolicy, { nullable: true })
  dstGap?: DstGapPolicy | null;

  @Field(() => DstRepeatPolicy, { nullable: true })
  dstRepeat?: DstRepeatPolicy | null;

  @Field(() => String, { nullable: true })
  jitter?: string | null;

  @Field(() => String, { nullable: true })
  spread?: string | null;
}

@InputType({ description: "HTTP jobs: the request each attempt makes (docs/job-kinds.md)." })
export class HttpRequestInput {
  @Field(() => String, { nullable: true, description: "GET, HEAD, POST (default), PUT, PATCH, DELETE or OPTIONS." })
  method?: string | null;

  @Field(() => String, { description: "An http:// or https:// URL of a public address (admins may allow more with KAIROS_HTTP_JOB_ALLOWED_CIDRS)." })
  url!: string;

  @Field(() => JSONObject, { nullable: true, description: "Header name → value. Host, Content-Length, Connection and the like, and Kairos-* headers, are the executor's." })
  headers?: Record<string, string> | null;

  @Field(() => String, { nullable: true, description: "Request body (at most 1 MiB); not with GET or HEAD." })
  body?: string | null;

  @Field(() => [String], { nullable: true, description: 'Statuses that count as success: "204", "2xx", "200-299". Default ["2xx"].' })
  successStatuses?: string[] | null;
}

@InputType()
export class JobSpecInput {
  @Field(() => SpecKind, { defaultValue: SpecKind.COMMAND })
  kind!: SpecKind;

  @Field(() => String, { nullable: true, description: "COMMAND: run by /bin/sh -c." })
  command?: string | null;

  @Field(() => [String], { nullable: true, description: "COMMAND: executed directly, without a shell." })
  argv?: string[] | null;

  @Field(() => String, { nullable: true, description: "SCRIPT: bash, sh, python3 or node; runs only on nodes that have it." })
  interpreter?: string | null;

  @Field(() => String, { nullable: true, description: "SCRIPT: the script's text, at most 1 MiB (or artifactId)." })
  source?: string | null;

  @Field(() => ID, { nullable: true, description: "SCRIPT or BINARY: an uploaded artifact of yours (completeArtifactUpload)." })
  artifactId?: string | null;

  @Field(() => [String], { nullable: true, description: "SCRIPT or BINARY: arguments after the file." })
  args?: string[] | null;

  @Field(() => HttpRequestInput, { nullable: true, description: "HTTP: the request." })
  http?: HttpRequestInput | null;

  @Field(() => JSONObject, { nullable: true })
  env?: Record<string, string> | null;

  @Field(() => String, { nullable: true, description: "ISO-8601, at most P1D; default PT1H." })
  timeout?: string | null;

  @Field(() => String, { nullable: true })
  pool?: string | null;

  @Field(() => ResourcesInput, { nullable: true, description: "CPU, memory, processes and disk one attempt may use; left out: the pool's defaults." })
  resources?: ResourcesInput | null;

  @Field(() => NetworkAccess, { nullable: true, description: "NONE (default): no network. EGRESS: outbound access, where the pool's nodes offer it." })
  network?: NetworkAccess | null;
}

@InputType()
export class RetryInput {
  @Field(() => Int, { nullable: true })
  maxAttempts?: number | null;

  @Field(() => BackoffKind, { nullable: true })
  backoff?: BackoffKind | null;

  @Field(() => String, { nullable: true })
  initial?: string | null;

  @Field(() => Float, { nullable: true })
  factor?: number | null;

  @Field(() => String, { nullable: true })
  max?: string | null;

  @Field(() => RetryJitter, { nullable: true })
  jitter?: RetryJitter | null;

  @Field(() => [Int], { nullable: true })
  nonRetryableExitCodes?: number[] | null;

  @Field(() => Boolean, { nullable: true, description: "Retry an attempt killed for exceeding its memory limit (OOM_KILLED). Default true." })
  retryOnOomKill?: boolean | null;
}

@InputType()
export class CreateJobInput {
  @Field(() => String)
  name!: string;

  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field(() => [String], { nullable: true })
  tags?: string[] | null;

  @Field(() => ScheduleInput)
  schedule!: ScheduleInput;

  @Field(() => JobSpecInput)
  spec!: JobSpecInput;

  @Field(() => Int, { nullable: true })
  priority?: number | null;

  @Field(() => RetryInput, { nullable: true })
  retry?: RetryInput | null;

  @Field(() => OverlapPolicy, { nullable: true })
  overlap?: OverlapPolicy | null;

  @Field(() => MisfirePolicy, { nullable: true })
  misfire?: MisfirePolicy | null;

  @Field(() => String, { nullable: true })
  catchupWindow?: string | null;

  @Field(() => Boolean, { nullable: true, description: "Create it paused." })
  paused?: boolean | null;
}

@InputType({ description: "Only the fields given change. A new schedule starts counting from now." })
export class UpdateJobInput {
  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field(() => [String], { nullable: true })
  tags?: string[] | null;

  @Field(() => ScheduleInput, { nullable: true })
  schedule?: ScheduleInput | null;

  @Field(() => JobSpecInput, { nullable: true })
  spec?: JobSpecInput | null;

  @Field(() => Int, { nullable: true })
  priority?: number | null;

  @Field(() => RetryInput, { nullable: true })
  retry?: RetryInput | null;

  @Field(() => OverlapPolicy, { nullable: true })
  overlap?: OverlapPolicy | null;

  @Field(() => MisfirePolicy, { nullable: true })
  misfire?: MisfirePolicy | null;

  @Field(() => String, { nullable: true })
  catchupWindow?: string | null;
}

@InputType()
export class JobFilter {
  @Field(() => ID, { nullable: true, description: "Admins only: jobs of this owner." })
  ownerId?: string | null;

  @Field(() => JobStatus, { nullable: true })
  status?: JobStatus | null;

  @Field(() => String, { nullable: true, description: "Exact name." })
  name?: string | null;

  @Field(() => String, { nullable: true })
  tag?: string | null;

  @Field(() => [RunStatus], {
    nullable: true,
    description:
      "Jobs whose last run (Job.lastRun) ended with one of these: SUCCEEDED, FAILED, TIMED_OUT, CANCELLED, DEAD. " +
      "E.g. [FAILED, TIMED_OUT, DEAD] for the jobs whose latest run went wrong. Jobs none of whose runs has ended yet never match.",
  })
  lastRunStatus?: string[] | null;
}
