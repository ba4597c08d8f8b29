import type { JobSpec as DomainJobSpec } from "../domain/index.js";
import { Resources } from "./resources.type.js";
import { Field, Float, ID, Int, ObjectType } from "type-graphql";
import { connectionTypes } from "./common.type.js";
import { Run } from "./run.type.js";
import { HttpRequest, JobArtifact } from "./job-kinds.type.js";
import {
  BackoffKind,
  DstGapPolicy,
  DstRepeatPolicy,
  FireOutcome,
  JobStatus,
  MisfirePolicy,
  OverlapPolicy,
  RetryJitter,
  ScheduleKind,
  SpecKind, NetworkAccess } from "./enums.js";
import { JobLastRun } from "./job-last-run.type.js";
import { DateTime, JSONObject } from "./scalars.js";

@ObjectType({ description: "When a job runs. Durations are ISO-8601 (PT30S, PT1H, P1D)." })
export class Schedule {
  @Field(() => ScheduleKind)
  kind!: ScheduleKind;

  @Field(() => DateTime, { nullable: true, description: "ONCE: the instant it runs." })
  at!: Date | null;

  @Field(() => String, { nullable: true, description: "INTERVAL: the period." })
  every!: string | null;

  @Field(() => String, { nullable: true, description: "CRON: the expression (5 fields, or 6 with seconds first)." })
  cron!: string | null;

  @Field(() => String, { description: "IANA time zone the cron is evaluated in." })
  timezone!: string;

  @Field(() => DateTime, { nullable: true, description: "INTERVAL anchor and first possible fire; CRON: no fire before it." })
  startAt!: Date | null;

  @Field(() => DateTime, { nullable: true })
  endAt!: Date | null;

  @Field(() => Int, { nullable: true })
  maxFires!: number | null;

  @Field(() => DstGapPolicy)
  dstGap!: DstGapPolicy;

  @Field(() => DstRepeatPolicy)
  dstRepeat!: DstRepeatPolicy;

  @Field(() => String, { nullable: true, description: "Random delay bound per fire." })
  jitter!: string | null;

  @Field(() => String, { nullable: true, description: "Deterministic spread window (hash of the job id)." })
  spread!: string | null;

  @Field(() => String, { description: "Human-readable summary." })
  description!: string;
}

@ObjectType({ description: "What a job runs." })
export class JobSpec {
  @Field(() => SpecKind)
  kind!: SpecKind;

  @Field(() => String, { nullable: true, description: "Run by /bin/sh -c." })
  command!: string | null;

  @Field(() => [String], { nullable: true, description: "Executed directly, without a shell." })
  argv!: string[] | null;

  @Field(() => String, { nullable: true, description: "SCRIPT: its interpreter." })
  interpreter!: string | null;

  @Field(() => String, { nullable: true, description: "SCRIPT: the inline script." })
  source!: string | null;

  @Field(() => JobArtifact, { nullable: true, description: "SCRIPT or BINARY: the artifact it runs." })
  artifact!: JobArtifact | null;

  @Field(() => [String], { nullable: true, description: "SCRIPT or BINARY: arguments after the file." })
  args!: string[] | null;

  @Field(() => HttpRequest, { nullable: true, description: "HTTP: the request." })
  http!: HttpRequest | null;

  @Field(() => JSONObject)
  env!: Record<string, string>;

  @Field(() => String, { description: "Per-attempt timeout (ISO-8601, at most P1D)." })
  timeout!: string;

  @Field(() => String)
  pool!: string;

  @Field(() => Resources, { description: "What one attempt may use (the pool's defaults filled in)." })
  resources!: Resources;

  @Field(() => NetworkAccess)
  network!: NetworkAccess;

  /**
   * Not in the schema: set on the spec of a job read without its text (command, argv, env, script
   * source and args, HTTP body and headers), which those fields then read for the request
   * (resolvers/job-spec.resolver.ts); `spec` is the stored spec as read, without them.
   */
  textOf?: { jobId: string; spec: DomainJobSpec };
}

@ObjectType()
export class RetryPolicy {
  @Field(() => Int, { description: "Attempts in all, including the first. 1 = no retries." })
  maxAttempts!: number;

  @Field(() => BackoffKind)
  backoff!: BackoffKind;

  @Field(() => String)
  initial!: string;

  @Field(() => Float)
  factor!: number;

  @Field(() => String)
  max!: string;

  @Field(() => RetryJitter)
  jitter!: RetryJitter;

  @Field(() => [Int], { description: "Exit codes that fail the run at once, without retries." })
  nonRetryableExitCodes!: number[];

  @Field(() => Boolean, { description: "Whether an attempt killed for exceeding its memory limit (OOM_KILLED) is retried." })
  retryOnOomKill!: boolean;
}

@ObjectType()
export class Job {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  ownerId!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String, { nullable: true })
  description!: string | null;

  @Field(() => [String])
  tags!: string[];

  @Field(() => Schedule)
  schedule!: Schedule;

  @Field(() => JobSpec)
  spec!: JobSpec;

  @Field(() => Int, { description: "0 (lowest) to 9 (highest): among this user's queued runs, higher runs first, equal is FIFO. Users take turns in the queues, so it does not put one user's runs ahead of another's." })
  priority!: number;

  @Field(() => RetryPolicy)
  retry!: RetryPolicy;

  @Field(() => OverlapPolicy)
  overlap!: OverlapPolicy;

  @Field(() => MisfirePolicy)
  misfire!: MisfirePolicy;

  @Field(() => String, { description: "How far back missed fires are still caught up." })
  catchupWindow!: string;

  @Field(() => Boolean)
  paused!: boolean;

  @Field(() => JobStatus)
  status!: JobStatus;

  @Field(() => JobLastRun, {
    nullable: true,
    description:
      "How the job's latest run went: its latest-scheduled run that has ended (status says only whether fires are still to come: " +
      "a one-off whose run FAILED is COMPLETED, with lastRun FAILED). Null until a run has ended. Filter jobs by it with filter.lastRunStatus.",
  })
  lastRun!: JobLastRun | null;

  @Field(() => DateTime, { nullable: true, description: "When the next fire is due (including spread and jitter)." })
  nextFireAt!: Date | null;

  @Field(() => DateTime, { nullable: true })
  lastSlotAt!: Date | null;

  @Field(() => Int)
  firedCount!: number;

  @Field(() => Boolean, { description: "The owner was deleted and an admin kept the job: paused, for reference only; it cannot run again." })
  ownerDeleted!: boolean;

  @Field(() => Int)
  version!: number;

  @Field(() => DateTime)
  createdAt!: Date;

  @Field(() => DateTime)
  updatedAt!: Date;
}

@ObjectType({ description: "Whether the job's runs can run, as of now." })
export class JobHealth {
  @Field(() => Boolean, { description: "Some online executor serves the job's pool." })
  poolServed!: boolean;

  @Field(() => Int, { description: "Online executor nodes serving the job's pool." })
  servingNodes!: number;

  @Field(() => Int, { description: "The job's runs waiting QUEUED." })
  queuedRuns!: number;

  @Field(() => DateTime, { nullable: true, description: "When the oldest of them was queued." })
  oldestQueuedAt!: Date | null;

  @Field(() => [String], { description: "The same as Job.warnings." })
  warnings!: string[];
}

/** A page of Job objects (Relay). */
export const { Edge: JobEdge, Connection: JobConnection } = connectionTypes(Job, "Job");
export type JobConnection = InstanceType<typeof JobConnection>;

@ObjectType({ description: "A future fire time of a job." })
export class NextFire {
  @Field(() => DateTime)
  at!: Date;

  @Field(() => String, { description: "The same instant in the job's time zone, with its offset." })
  local!: string;

  @Field(() => String, { nullable: true, description: "Set when a daylight-saving rule applied to this fire." })
  dst!: string | null;
}

@ObjectType({ description: "What a schedule would do, before a job has it (previewSchedule)." })
export class SchedulePreview {
  @Field(() => String, { description: "Human-readable summary, as Schedule.description." })
  description!: string;

  @Field(() => [NextFire], { description: "The next fire times from now, in UTC and in the schedule's zone, as Job.nextFires." })
  nextFires!: NextFire[];
}

@ObjectType({ description: "The recorded outcome of one schedule slot." })
export class Fire {
  @Field(() => ID, { description: "The slot's fireKey." })
  id!: string;

  @Field(() => DateTime)
  slotAt!: Date;

  @Field(() => FireOutcome)
  outcome!: FireOutcome;

  @Field(() => ID, { nullable: true })
  runId!: string | null;

  @Field(() => Int, { nullable: true })
  latenessMs!: number | null;

  @Field(() => String, { nullable: true })
  reason!: string | null;

  @Field(() => DateTime)
  recordedAt!: Date;
}

/** A page of Fire objects (Relay). */
export const { Edge: FireEdge, Connection: FireConnection } = connectionTypes(Fire, "Fire");
export type FireConnection = InstanceType<typeof FireConnection>;

@ObjectType({ description: "A job due within the asked window, at its next fire." })
export class UpcomingFire {
  @Field(() => Job)
  job!: Job;

  @Field(() => DateTime, { description: "When its next fire is due (a run staged ahead of its time: that time)." })
  at!: Date;
}

/** A page of upcoming fires (Relay): soonest first, by (at, job id). */
export const { Edge: UpcomingFireEdge, Connection: UpcomingFireConnection } = connectionTypes(UpcomingFire, "UpcomingFire");
export type UpcomingFireConnection = InstanceType<typeof UpcomingFireConnection>;

@ObjectType()
export class BackfillResult {
  @Field(() => Int, { description: "Slots of the schedule in the range." })
  requested!: number;

  @Field(() => Int, { description: "Slots that already had a run (deduplicated by fireKey)." })
  existing!: number;

  @Field(() => [Run], { description: "The runs created." })
  runs!: Run[];
}
