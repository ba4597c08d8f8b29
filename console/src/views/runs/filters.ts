/**
 * The runs list's filters: kept in the address's query string (so a filtered view can be shared
 * and survives a reload; the credential is never in it), turned into the API's search arguments,
 * and matched against a run that arrives live (a new run appears only if it would have been found).
 */
import type { ConsoleRunRowFragment, RunStatus, RunTrigger } from "../../../../generated/client/graphql";
import { addressInstant } from "../../ui/address-instant";

export const STATUSES: RunStatus[] = ["PENDING", "SCHEDULED", "QUEUED", "RUNNING", "CANCELLING", "RETRY_SCHEDULED", "SUCCEEDED", "FAILED", "TIMED_OUT", "CANCELLED", "WITHDRAWN", "DEAD"];
export const TRIGGERS: RunTrigger[] = ["SCHEDULE", "MANUAL", "RETRY", "BACKFILL"];

export interface RunFilters {
  status: RunStatus | null;
  jobId: string;
  name: string;
  dagId: string;
  dagRunId: string;
  nodeId: string;
  pool: string;
  trigger: RunTrigger | null;
  /** ISO instants (scheduledFor window: from included, to excluded). */
  from: string;
  to: string;
}

export const NO_FILTERS: RunFilters = { status: null, jobId: "", name: "", dagId: "", dagRunId: "", nodeId: "", pool: "", trigger: null, from: "", to: "" };

/** Query-string keys, in the order they are written. */
const KEYS: Array<[keyof RunFilters, string]> = [
  ["status", "status"],
  ["jobId", "job"],
  ["name", "name"],
  ["dagId", "dag"],
  ["dagRunId", "dagRun"],
  ["nodeId", "node"],
  ["pool", "pool"],
  ["trigger", "trigger"],
  ["from", "from"],
  ["to", "to"],
];

const validIso = addressInstant;

export function filtersFromSearch(search: string): RunFilters {
  const q = new URLSearchParams(search);
  const get = (k: string) => (q.get(k) ?? "").trim().slice(0, 200);
  // `status=failed` typed by hand is the status FAILED.
  const status = get("status").toUpperCase() as RunStatus;
  const trigger = get("trigger").toUpperCase() as RunTrigger;
  return {
    status: STATUSES.includes(status) ? status : null,
    jobId: get("job"),
    name: get("name").slice(0, 100),
    dagId: get("dag"),
    dagRunId: get("dagRun"),
    nodeId: get("node"),
    pool: get("pool"),
    trigger: TRIGGERS.includes(trigger) ? trigger : null,
    from: validIso(get("from")),
    to: validIso(get("to")),
  };
}

/**
 * What the address asks for that is no filter (a status or trigger there is none of, a time that
 * is not one), each with what is allowed: the list leaves it out, and says so above the list
 * instead of showing every run as if nothing had been asked.
 */
export function ignoredFilters(search: string): string[] {
  const q = new URLSearchParams(search);
  const shown = (v: string) => (v.length > 40 ? `${v.slice(0, 40)}…` : v);
  const out: string[] = [];
  const status = (q.get("status") ?? "").trim();
  if (status && !STATUSES.includes(status.toUpperCase() as RunStatus)) {
    out.push(`status=${shown(status)} in the address is not a run status; allowed: ${STATUSES.join(", ")}. Showing runs of any status.`);
  }
  const trigger = (q.get("trigger") ?? "").trim();
  if (trigger && !TRIGGERS.includes(trigger.toUpperCase() as RunTrigger)) {
    out.push(`trigger=${shown(trigger)} in the address is not a trigger; allowed: ${TRIGGERS.join(", ")}. Showing runs of any trigger.`);
  }
  for (const [key, words] of [["from", "from any time"], ["to", "up to any time"]] as const) {
    const v = (q.get(key) ?? "").trim();
    if (v && !validIso(v)) out.push(`${key}=${shown(v)} in the address is not a date and time (such as 2026-01-31T09:00:00Z). Showing runs ${words}.`);
  }
  return out;
}

export function filtersToSearch(f: RunFilters): string {
  const q = new URLSearchParams();
  for (const [field, key] of KEYS) {
    const v = f[field];
    if (v) q.set(key, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

export function activeFilterCount(f: RunFilters): number {
  return KEYS.filter(([field]) => !!f[field]).length;
}

/** The API's `runs(jobId, status, filter)` arguments. */
export function searchArgs(f: RunFilters) {
  const filter = {
    ...(f.dagId ? { dagId: f.dagId } : {}),
    ...(f.dagRunId ? { dagRunId: f.dagRunId } : {}),
    ...(f.nodeId ? { nodeId: f.nodeId } : {}),
    ...(f.pool ? { pool: f.pool } : {}),
    ...(f.trigger ? { trigger: f.trigger } : {}),
    ...(f.from ? { scheduledFrom: f.from } : {}),
    ...(f.to ? { scheduledTo: f.to } : {}),
    ...(f.name ? { name: f.name } : {}),
  };
  return {
    jobId: f.jobId || null,
    status: f.status,
    filter: Object.keys(filter).length > 0 ? filter : null,
  };
}

/**
 * Runs in the list's first page: more than a tall screen shows (40 px a row), and the API answers
 * it in about half the time of a page of 100, which the pages after it hold.
 */
export const FIRST_RUNS_PAGE = 50;
/** Runs in each later page of the list, loaded as it scrolls. */
export const RUNS_PAGE = 100;

/**
 * The variables of one page of the list's search (ConsoleRunsSearch), in one order: the console's
 * first-request script (boot/first-query.ts) and the runs view build them here alike, so the app
 * can tell that the answer the script asked for is the one it needs.
 */
export function runsPageVariables(f: RunFilters, after: string | null) {
  return { ...searchArgs(f), first: after === null ? FIRST_RUNS_PAGE : RUNS_PAGE, after };
}

/**
 * Would the search have found this run? Used for runs that arrive live. A DAG run's tasks cannot
 * be told apart from the run alone, so with that filter nothing new is added (a reload finds them).
 */
export function matchesFilters(f: RunFilters, r: ConsoleRunRowFragment): boolean {
  if (f.dagRunId) return false;
  // Withdrawn runs (staged, then taken back by a pause or an edit) are listed only when asked for, as the API does.
  if (r.status === "WITHDRAWN" && f.status !== "WITHDRAWN") return false;
  if (f.status) {
    const status = r.status === "RUNNING" && r.cancelRequested ? "CANCELLING" : r.status;
    if (status !== f.status) return false;
  }
  if (f.jobId && r.jobId !== f.jobId) return false;
  if (f.dagId && r.jobId !== f.dagId) return false;
  if (f.nodeId && r.nodeId !== f.nodeId) return false;
  if (f.pool && r.pool !== f.pool) return false;
  if (f.trigger && r.trigger !== f.trigger) return false;
  const at = Date.parse(r.scheduledFor);
  if (f.from && at < Date.parse(f.from)) return false;
  if (f.to && at >= Date.parse(f.to)) return false;
  if (f.name && !r.jobName.toLowerCase().includes(f.name.toLowerCase())) return false;
  return true;
}
