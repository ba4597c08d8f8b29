/**
 * An alert rule's input checked (pure): every refusal names the field, what was wrong and what is
 * allowed. Ownership and existence of the job or DAG are the service's (rules.ts).
 */
import { ALERT_CLUSTER_EVENTS, ALERT_SENT_ONLY_EVENTS, AlertEvent, HIDDEN_CHARACTERS_RULE, ScheduleKind, ValidationError, hasHiddenCharacters, unpairedSurrogateProblem, urlParseProblem, type AlertRuleDoc, type Schedule } from "../../domain/index.js";
import { formatDuration, formatLocal, longestCronGap, parsePositiveDuration, type CronGap } from "../../timing/index.js";

export interface AlertRuleInput {
  name: string;
  on: readonly string[];
  jobId?: string | null;
  dagId?: string | null;
  /** Administrators: every user's jobs and the cluster's nodes. */
  cluster?: boolean | null;
  webhook: { url: string; slack?: boolean | null };
  /** FAILURE_RATE: over this window (ISO 8601 duration), above this fraction (0 < t <= 1), once at least minRuns ended. */
  failureRate?: { window: string; threshold: number; minRuns?: number | null } | null;
  /** QUEUE_LATENESS: a run still waiting this long (ISO 8601 duration) after it was due. */
  queueLateness?: string | null;
  /** DEADLINE_MISSED: a slot's run not finished this long (ISO 8601 duration) after its scheduled time. */
  deadline?: string | null;
  /** SCHEDULE_SILENT: the watched schedule (jobId, dagId, or neither: each of the owner's recurring ones) with no successful run this long (ISO 8601 duration). */
  silentFor?: string | null;
}

export const ALERT_NAME_MAX = 100;
export const ALERT_URL_MAX = 2_048;
const MIN_RATE_WINDOW_MS = 60_000;
const MAX_RATE_WINDOW_MS = 7 * 24 * 3600_000;
const MIN_THRESHOLD_MS = 1_000;
/**
 * Longest `deadline`: alertDeadlines keeps a slot's record 30 days from when the slot fired (TTL), so
 * a deadline must end well inside that; a week, like failureRate's window.
 */
export const MAX_DEADLINE_MS = 7 * 24 * 3600_000;
/** The most runs failureRate.minRuns may ask for. */
export const MAX_RATE_MIN_RUNS = 1_000_000;
/** Longest `silentFor`: a yearly schedule's gap (a silence is counted from the last success, kept in alertSilences without expiry). */
export const MAX_SILENT_FOR_MS = 366 * 24 * 3600_000;

/** The events a rule may name (SCHEDULE_SILENT_RESOLVED comes with SCHEDULE_SILENT). */
const EVENTS = (Object.values(AlertEvent) as string[]).filter((e) => !(ALERT_SENT_ONLY_EVENTS as readonly string[]).includes(e));

export type CheckedRule = Pick<AlertRuleDoc, "name" | "on" | "jobId" | "dagId" | "cluster" | "webhook" | "failureRate" | "queueLatenessMs" | "deadlineMs" | "silentForMs">;

export function checkAlertRule(input: AlertRuleInput, isAdmin: boolean): CheckedRule {
  const name = input.name.trim();
  if (name.length < 1 || name.length > ALERT_NAME_MAX) throw new ValidationError("name", `must be 1 to ${ALERT_NAME_MAX} characters (got ${name.length})`);
  if (hasHiddenCharacters(name)) throw new ValidationError("name", `must be 1 to ${ALERT_NAME_MAX} characters with ${HIDDEN_CHARACTERS_RULE}`);
  const unpaired = unpairedSurrogateProblem(name);
  if (unpaired) throw new ValidationError("name", unpaired);
  if (input.on.length === 0) throw new ValidationError("on", `name at least one event: ${EVENTS.join(", ")}`);
  const on: AlertEvent[] = [];
  for (const e of input.on) {
    if (e === AlertEvent.SCHEDULE_SILENT_RESOLVED) {
      throw new ValidationError("on", "SCHEDULE_SILENT_RESOLVED is not named in on: a rule on SCHEDULE_SILENT sends it when a silence it reported ends with a success");
    }
    if (!EVENTS.includes(e)) throw new ValidationError("on", `"${e}" is not an alert event; the events are ${EVENTS.join(", ")}`);
    if (!on.includes(e as AlertEvent)) on.push(e as AlertEvent);
  }
  const jobId = input.jobId ?? null;
  const dagId = input.dagId ?? null;
  if (jobId !== null && dagId !== null) throw new ValidationError("jobId", "give jobId or dagId, not both (neither: all of your jobs and DAGs)");
  const cluster = input.cluster ?? false;
  if (cluster && !isAdmin) throw new ValidationError("cluster", "only administrators may make cluster-wide rules");
  if (cluster && (jobId !== null || dagId !== null)) throw new ValidationError("cluster", "a cluster-wide rule covers every job: leave jobId and dagId out");
  for (const e of on) {
    if (ALERT_CLUSTER_EVENTS.includes(e) && !cluster) throw new ValidationError("on", `${e} is about the cluster's nodes: only a cluster-wide rule (cluster: true, administrators) may listen to it`);
  }
  const webhook = { url: checkUrl(input.webhook.url), slack: input.webhook.slack ?? false };
  const failureRate = on.includes(AlertEvent.FAILURE_RATE) ? checkRate(input.failureRate) : null;
  if (!on.includes(AlertEvent.FAILURE_RATE) && input.failureRate) throw new ValidationError("failureRate", "is only for a rule on FAILURE_RATE");
  const queueLatenessMs = threshold("queueLateness", input.queueLateness, on.includes(AlertEvent.QUEUE_LATENESS), AlertEvent.QUEUE_LATENESS);
  const deadlineMs = threshold("deadline", input.deadline, on.includes(AlertEvent.DEADLINE_MISSED), AlertEvent.DEADLINE_MISSED);
  if (deadlineMs !== null && deadlineMs > MAX_DEADLINE_MS) throw new ValidationError("deadline", `must be from PT1S to P7D (got ${input.deadline}): the records of armed deadlines are kept 30 days`);
  const silentForMs = threshold("silentFor", input.silentFor, on.includes(AlertEvent.SCHEDULE_SILENT), AlertEvent.SCHEDULE_SILENT);
  if (silentForMs !== null) {
    if (silentForMs > MAX_SILENT_FOR_MS) throw new ValidationError("silentFor", `must be from PT1S to P366D (got ${input.silentFor}): a yearly schedule's gap at most`);
    if (cluster) {
      throw new ValidationError(
        "cluster",
        "a rule on SCHEDULE_SILENT watches its owner's schedules, not every user's (that would be a watch per schedule of the cluster): leave cluster out, and the rule watches every INTERVAL or CRON job and scheduled DAG of yours; or give jobId or dagId to watch one",
      );
    }
  }
  return { name, on, jobId, dagId, cluster, webhook, failureRate, queueLatenessMs, deadlineMs, silentForMs };
}

/**
 * How long a recurring schedule goes between two fires at most, with nothing wrong: an INTERVAL's
 * period; a CRON's longest gap between consecutive fires over the year ahead (timing/cron-gaps.ts,
 * cached per expression and zone). Null: not recurring, or a cron that fires at most once more.
 */
export function longestQuiet(s: Schedule, now: number): (CronGap & { cron: true }) | { ms: number; cron: false } | null {
  if (s.kind === ScheduleKind.INTERVAL && s.everyMs !== null) return { ms: s.everyMs, cron: false };
  if (s.kind !== ScheduleKind.CRON || s.cron === null) return null;
  const gap = longestCronGap(s, now);
  return gap && { ...gap, cron: true };
}

/**
 * The schedule a SCHEDULE_SILENT rule watches, checked against it: a recurring one (INTERVAL or
 * CRON; a one-off has no schedule to go quiet), named by its DAG when it is a DAG's, and not watched
 * for less than it goes without a fire with nothing wrong (an INTERVAL's period, a CRON's longest
 * gap: it would fire between two runs).
 */
export function checkSilentSchedule(silentForMs: number, silentFor: string, s: { field: "jobId" | "dagId"; id: string; schedule: Schedule | null; dagTimer: boolean }, now: number): void {
  if (s.dagTimer) throw new ValidationError(s.field, `${s.id} is a DAG's schedule: give dagId: "${s.id}" instead of jobId`);
  if (s.schedule === null) throw new ValidationError(s.field, `DAG ${s.id} has no schedule: SCHEDULE_SILENT watches a scheduled DAG, or an INTERVAL or CRON job`);
  if (s.schedule.kind !== ScheduleKind.INTERVAL && s.schedule.kind !== ScheduleKind.CRON) {
    throw new ValidationError(s.field, `${s.field === "jobId" ? "job" : "DAG"} ${s.id} has a ${s.schedule.kind} schedule: SCHEDULE_SILENT watches a recurring one (INTERVAL or CRON)`);
  }
  const quiet = longestQuiet(s.schedule, now);
  if (quiet === null || silentForMs >= quiet.ms) return;
  const what = s.field === "jobId" ? `job ${s.id}` : `DAG ${s.id}`;
  const gap = quiet.cron
    ? `the longest gap between fires of "${s.schedule.cron}" in ${s.schedule.timezone} over the next year (${formatDuration(quiet.ms)}, from ${formatLocal(s.schedule.timezone, quiet.from)} to ${formatLocal(s.schedule.timezone, quiet.to)})`
    : `the schedule's period (${s.schedule.every})`;
  if (quiet.ms > MAX_SILENT_FOR_MS) {
    throw new ValidationError(s.field, `${what} can go ${formatDuration(quiet.ms)} without a fire (${gap}), longer than silentFor may be (P366D): SCHEDULE_SILENT cannot watch it`);
  }
  throw new ValidationError("silentFor", `${silentFor} is shorter than ${gap}: it would fire between two runs with nothing wrong; give at least ${quiet.cron ? formatDuration(quiet.ms) : s.schedule.every}`);
}

function checkUrl(raw: string): string {
  const url = raw.trim();
  if (url.length > ALERT_URL_MAX) throw new ValidationError("webhook.url", `is ${url.length} characters; at most ${ALERT_URL_MAX}`);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ValidationError("webhook.url", `${urlParseProblem(url)}; give an absolute URL, like https://hooks.example.com/kairos`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new ValidationError("webhook.url", `scheme ${u.protocol} is not allowed: http or https only`);
  if (u.username || u.password) throw new ValidationError("webhook.url", "must not carry a user name or password; put a token in the path or query");
  return url;
}

function checkRate(r: AlertRuleInput["failureRate"]): NonNullable<AlertRuleDoc["failureRate"]> {
  if (!r) throw new ValidationError("failureRate", "a rule on FAILURE_RATE needs failureRate: {window, threshold, minRuns}");
  const windowMs = parsePositiveDuration(r.window, "failureRate.window");
  if (windowMs < MIN_RATE_WINDOW_MS || windowMs > MAX_RATE_WINDOW_MS) throw new ValidationError("failureRate.window", `must be from PT1M to P7D (got ${r.window})`);
  if (!(r.threshold > 0 && r.threshold <= 1)) throw new ValidationError("failureRate.threshold", `is the failed fraction that fires the alert: above 0 and at most 1 (got ${r.threshold})`);
  const minRuns = r.minRuns ?? 1;
  if (!Number.isInteger(minRuns) || minRuns < 1 || minRuns > MAX_RATE_MIN_RUNS) throw new ValidationError("failureRate.minRuns", `must be a whole number from 1 to ${MAX_RATE_MIN_RUNS} (got ${minRuns})`);
  return { windowMs, threshold: r.threshold, minRuns };
}

function threshold(field: string, raw: string | null | undefined, wanted: boolean, event: string): number | null {
  if (!wanted) {
    if (raw != null) throw new ValidationError(field, `is only for a rule on ${event}`);
    return null;
  }
  if (raw == null) throw new ValidationError(field, `a rule on ${event} needs ${field} (an ISO 8601 duration like PT5M)`);
  const ms = parsePositiveDuration(raw, field);
  if (ms < MIN_THRESHOLD_MS) throw new ValidationError(field, `must be at least PT1S (got ${raw})`);
  return ms;
}
