/**
 * Alert rules and what they produce (docs/alerts.md): the events a rule listens to, the rule, one
 * firing per (rule, subject) — the de-duplication unit, its `_id` unique — and the deliveries
 * (webhook calls) that carry one or several firings.
 */

/**
 * What a rule can listen to:
 * - `RUN_FAILED`, `RUN_TIMED_OUT`, `RUN_DEAD`: a run ended so (its final status);
 * - `RUN_OOM_KILLED`: a run's last attempt was killed for its memory (it ended FAILED or DEAD);
 * - `RECOVERED`: a job (or a DAG's task runs) succeeded after a run of it failed;
 * - `FIRE_MISSED`: a slot the misfire policy did not run (ledger outcome MISSED);
 * - `FIRE_SKIPPED`: a slot skipped (SKIPPED_OVERLAP, SKIPPED_PAUSED, SKIPPED_DST, SKIPPED_BACKLOG);
 * - `DEADLINE_MISSED`: a slot's run not finished `deadline.afterMs` after its scheduled time;
 * - `FAILURE_RATE`: failed runs over `failureRate.threshold` of those finished in `failureRate.windowMs`;
 * - `NODE_LOST`: an executor node stopped heartbeating and was marked DEAD (cluster-wide rules only);
 * - `QUEUE_LATENESS`: a run still waiting to start `queueLatenessMs` after it was due;
 * - `SCHEDULE_SILENT`: a recurring job or a scheduled DAG with no successful run for `silentForMs`
 *   (since its last success, or since the rule or job was made);
 * - `SCHEDULE_SILENT_RESOLVED`: not a rule's event but what a rule on SCHEDULE_SILENT sends when a
 *   silence it reported ends with a success (ALERT_SENT_ONLY_EVENTS).
 */
export const AlertEvent = {
  RUN_FAILED: "RUN_FAILED",
  RUN_DEAD: "RUN_DEAD",
  RUN_TIMED_OUT: "RUN_TIMED_OUT",
  RUN_OOM_KILLED: "RUN_OOM_KILLED",
  RECOVERED: "RECOVERED",
  FIRE_MISSED: "FIRE_MISSED",
  FIRE_SKIPPED: "FIRE_SKIPPED",
  DEADLINE_MISSED: "DEADLINE_MISSED",
  FAILURE_RATE: "FAILURE_RATE",
  NODE_LOST: "NODE_LOST",
  QUEUE_LATENESS: "QUEUE_LATENESS",
  SCHEDULE_SILENT: "SCHEDULE_SILENT",
  SCHEDULE_SILENT_RESOLVED: "SCHEDULE_SILENT_RESOLVED",
} as const;
export type AlertEvent = (typeof AlertEvent)[keyof typeof AlertEvent];

/** A delivery's state: PENDING (due at nextAttemptAt), SENDING (one sender holds it until leaseUntil), DELIVERED, FAILED (given up). */
export const AlertDeliveryStatus = { PENDING: "PENDING", SENDING: "SENDING", DELIVERED: "DELIVERED", FAILED: "FAILED" } as const;
export type AlertDeliveryStatus = (typeof AlertDeliveryStatus)[keyof typeof AlertDeliveryStatus];

export interface AlertWebhook {
  url: string;
  /** Send `{"text": …}` (a Slack incoming webhook's shape) instead of the full JSON body. */
  slack: boolean;
}

export interface AlertRuleDoc {
  _id: string;
  ownerId: string;
  name: string;
  on: AlertEvent[];
  /** One job (or one DAG's task runs: their jobId is the DAG's id); both null: all of the owner's. */
  jobId: string | null;
  dagId: string | null;
  /** Administrators only: every user's jobs, and the cluster's nodes. */
  cluster: boolean;
  webhook: AlertWebhook;
  /** No firing is made before this instant (null: not muted). */
  mutedUntil: Date | null;
  failureRate: { windowMs: number; threshold: number; minRuns: number } | null;
  queueLatenessMs: number | null;
  deadlineMs: number | null;
  /** SCHEDULE_SILENT: how long the watched schedule may go without a successful run (absent on rules older than it: null). */
  silentForMs?: number | null;
  createdAt: Date;
  updatedAt: Date;
  /** When the last delivery of this rule was made: the next waits out the group window after it. */
  lastDeliveryAt: Date | null;
}

/** One thing a rule fired for. `_id` is `<ruleId>|<subject>`: a second insert of it is a duplicate, not a second alert. */
export interface AlertFiringDoc {
  _id: string;
  ruleId: string;
  ownerId: string;
  event: AlertEvent;
  /** When what it reports happened (a run's end, a slot's record, a node's last heartbeat). */
  at: Date;
  runId: string | null;
  jobId: string | null;
  jobName: string | null;
  fireKey: string | null;
  nodeId: string | null;
  /** One line saying what happened. */
  detail: string;
  /** The delivery carrying it; null until the dispatcher groups it. */
  deliveryId: string | null;
  createdAt: Date;
}

export interface AlertDeliveryDoc {
  _id: string;
  ruleId: string;
  ownerId: string;
  /** A testAlertRule call's delivery. */
  test: boolean;
  events: AlertEvent[];
  /** How many firings it carries (its body lists at most ALERT_BODY_MAX_ITEMS of them). */
  count: number;
  firingIds: string[];
  runIds: string[];
  /**
   * The request body, fixed once its firings are assigned so every retry sends the same bytes;
   * null while the delivery is being put together (firings are assigned after it is inserted, so a
   * crash in between leaves a delivery the dispatcher finishes, never firings without one).
   */
  body: string | null;
  url: string;
  status: AlertDeliveryStatus;
  attempts: number;
  nextAttemptAt: Date;
  leaseUntil: Date | null;
  responseCode: number | null;
  error: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
}

/** Most firings one delivery carries; a storm larger than this goes out in several. */
export const ALERT_GROUP_MAX = 500;
/** Most firings a body lists one by one (the count says how many there were). */
export const ALERT_BODY_MAX_ITEMS = 50;

/** The runs' final statuses each run event stands for. */
export const ALERT_RUN_EVENTS = [AlertEvent.RUN_FAILED, AlertEvent.RUN_DEAD, AlertEvent.RUN_TIMED_OUT, AlertEvent.RUN_OOM_KILLED] as const;
/** Events a message may carry that a rule does not name in `on`: a rule on SCHEDULE_SILENT sends SCHEDULE_SILENT_RESOLVED. */
export const ALERT_SENT_ONLY_EVENTS: readonly AlertEvent[] = [AlertEvent.SCHEDULE_SILENT_RESOLVED];
/** Events only a cluster-wide rule may have. */
export const ALERT_CLUSTER_EVENTS: readonly AlertEvent[] = [AlertEvent.NODE_LOST];

export const alertFiringId = (ruleId: string, subject: string): string => `${ruleId}|${subject}`;
