/** Alert rules, their deliveries and the alertFired event (docs/alerts.md). */
import { Field, Float, ID, InputType, Int, ObjectType } from "type-graphql";
import { connectionTypes } from "./common.type.js";
import { AlertDeliveryStatus, AlertEvent } from "./enums.js";
import { DateTime } from "./scalars.js";

@InputType({ description: "Where a rule's alerts go." })
export class AlertWebhookInput {
  @Field(() => String, { description: "http(s) URL, at most 2048 characters. Loopback and private addresses only where KAIROS_ALERT_ALLOWED_CIDRS allows them." })
  url!: string;

  @Field(() => Boolean, { nullable: true, description: 'Send a Slack incoming webhook\'s body, {"text": …}, instead of the full JSON. Default false.' })
  slack?: boolean | null;
}

@InputType({ description: "FAILURE_RATE: fires when at least `threshold` of the runs that ended in the last `window` failed, once at least `minRuns` ended." })
export class FailureRateInput {
  @Field(() => String, { description: "ISO 8601 duration, PT1M to P7D." })
  window!: string;

  @Field(() => Float, { description: "The failed fraction, above 0 and at most 1 (0.5 = half)." })
  threshold!: number;

  @Field(() => Int, { nullable: true, description: "Fewer runs than this in the window fire nothing. Default 1." })
  minRuns?: number | null;
}

@InputType({ description: "A new alert rule. Neither jobId nor dagId: all of your jobs and DAGs." })
export class CreateAlertRuleInput {
  @Field(() => String, { description: "1–100 characters." })
  name!: string;

  @Field(() => [AlertEvent], { description: "What fires it; at least one." })
  on!: AlertEvent[];

  @Field(() => ID, { nullable: true, description: "Only this job's runs and slots." })
  jobId?: string | null;

  @Field(() => ID, { nullable: true, description: "Only this DAG's task runs and slots." })
  dagId?: string | null;

  @Field(() => Boolean, { nullable: true, description: "Administrators: every user's jobs and the cluster's nodes (NODE_LOST needs it). Default false." })
  cluster?: boolean | null;

  @Field(() => AlertWebhookInput)
  webhook!: AlertWebhookInput;

  @Field(() => FailureRateInput, { nullable: true, description: "Required with FAILURE_RATE, refused without it." })
  failureRate?: FailureRateInput | null;

  @Field(() => String, { nullable: true, description: "QUEUE_LATENESS: how long after it was due a run may wait to start (ISO 8601 duration, at least PT1S)." })
  queueLateness?: string | null;

  @Field(() => String, { nullable: true, description: "DEADLINE_MISSED: how long after its scheduled time a slot's run must have finished (ISO 8601 duration, at least PT1S)." })
  deadline?: string | null;

  @Field(() => String, {
    nullable: true,
    description: "SCHEDULE_SILENT: how long a watched schedule may go without a successful run (ISO 8601 duration, PT1S to P366D). jobId: that INTERVAL or CRON job (at least its period, or a CRON's longest gap between fires over the next year); dagId: that scheduled DAG (likewise); neither: each INTERVAL or CRON job and scheduled DAG of yours, those made later too (not one whose period or longest gap is longer). Not on a cluster-wide rule.",
  })
  silentFor?: string | null;
}

@InputType({ description: "The fields to change; those left out stay. The whole rule is checked again." })
export class UpdateAlertRuleInput {
  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => [AlertEvent], { nullable: true })
  on?: AlertEvent[] | null;

  @Field(() => ID, { nullable: true, description: "Set to watch one job; null (given explicitly) for none." })
  jobId?: string | null;

  @Field(() => ID, { nullable: true })
  dagId?: string | null;

  @Field(() => Boolean, { nullable: true })
  cluster?: boolean | null;

  @Field(() => AlertWebhookInput, { nullable: true })
  webhook?: AlertWebhookInput | null;

  @Field(() => FailureRateInput, { nullable: true })
  failureRate?: FailureRateInput | null;

  @Field(() => String, { nullable: true })
  queueLateness?: string | null;

  @Field(() => String, { nullable: true })
  deadline?: string | null;

  @Field(() => String, { nullable: true })
  silentFor?: string | null;
}

@ObjectType()
export class AlertWebhook {
  @Field(() => String)
  url!: string;

  @Field(() => Boolean)
  slack!: boolean;
}

@ObjectType()
export class FailureRate {
  @Field(() => String, { description: "ISO 8601 duration." })
  window!: string;

  @Field(() => Float)
  threshold!: number;

  @Field(() => Int)
  minRuns!: number;
}

@ObjectType({ description: "An alert rule: what fires it, what it watches, where its alerts go." })
export class AlertRule {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  ownerId!: string;

  @Field(() => String)
  name!: string;

  @Field(() => [AlertEvent])
  on!: AlertEvent[];

  @Field(() => ID, { nullable: true })
  jobId!: string | null;

  @Field(() => ID, { nullable: true })
  dagId!: string | null;

  @Field(() => Boolean)
  cluster!: boolean;

  @Field(() => AlertWebhook)
  webhook!: AlertWebhook;

  @Field(() => DateTime, { nullable: true, description: "No alert before this instant; null: not muted." })
  mutedUntil!: Date | null;

  @Field(() => FailureRate, { nullable: true })
  failureRate!: FailureRate | null;

  @Field(() => String, { nullable: true })
  queueLateness!: string | null;

  @Field(() => String, { nullable: true })
  deadline!: string | null;

  @Field(() => String, { nullable: true })
  silentFor!: string | null;

  @Field(() => DateTime)
  createdAt!: Date;

  @Field(() => DateTime)
  updatedAt!: Date;
}

@ObjectType({ description: "One webhook message of a rule: one alert, or a storm grouped (count, runIds)." })
export class AlertDelivery {
  @Field(() => ID, { description: "Also the Kairos-Delivery-Id header and the signed id: a receiver de-duplicates retries by it." })
  id!: string;

  @Field(() => ID)
  ruleId!: string;

  @Field(() => Boolean, { description: "Sent by testAlertRule." })
  test!: boolean;

  @Field(() => [AlertEvent])
  events!: AlertEvent[];

  @Field(() => Int, { description: "How many alerts it carries." })
  count!: number;

  @Field(() => [ID], { description: "The runs it is about (at most 500)." })
  runIds!: string[];

  @Field(() => AlertDeliveryStatus)
  status!: AlertDeliveryStatus;

  @Field(() => Int, { description: "Attempts made so far." })
  attempts!: number;

  @Field(() => Int, { nullable: true, description: "The last attempt's HTTP status; null when nothing answered." })
  responseCode!: number | null;

  @Field(() => String, { nullable: true, description: "Why the last attempt failed." })
  error!: string | null;

  @Field(() => DateTime)
  createdAt!: Date;

  @Field(() => DateTime, { nullable: true })
  nextAttemptAt!: Date | null;

  @Field(() => DateTime, { nullable: true })
  deliveredAt!: Date | null;
}

export const { Edge: AlertRuleEdge, Connection: AlertRuleConnection } = connectionTypes(AlertRule, "AlertRule");
export type AlertRuleConnection = InstanceType<typeof AlertRuleConnection>;

export const { Edge: AlertDeliveryEdge, Connection: AlertDeliveryConnection } = connectionTypes(AlertDelivery, "AlertDelivery");
export type AlertDeliveryConnection = InstanceType<typeof AlertDeliveryConnection>;

@ObjectType({ description: "An alert delivery was made (alertFired)." })
export class AlertFired {
  @Field(() => ID)
  deliveryId!: string;

  @Field(() => ID)
  ruleId!: string;

  @Field(() => String)
  ruleName!: string;

  @Field(() => Boolean)
  test!: boolean;

  @Field(() => [AlertEvent])
  events!: AlertEvent[];

  @Field(() => Int)
  count!: number;

  @Field(() => [ID])
  runIds!: string[];

  @Field(() => DateTime)
  at!: Date;
}
