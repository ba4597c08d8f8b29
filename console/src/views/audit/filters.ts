/**
 * The audit view's filters: kept in the address's query string (a filtered trail can be shared and
 * survives a reload), and turned into the API's AuditLogFilter. Only what `auditLog` can filter on:
 * mutation names, the calling user or API key, a subject id, the outcome, and a time range.
 */
import type { AuditLogFilter } from "../../../../generated/client/graphql";
import { addressInstant } from "../../ui/address-instant";

export interface AuditFilters {
  /** Mutation names, e.g. ["createJob", "deleteJob"]. */
  actions: string[];
  userId: string;
  apiKeyId: string;
  /** An id the call named or made (a job, run, DAG, user, API key …). */
  subject: string;
  outcome: string;
  /** ISO instants: from included, to excluded. */
  from: string;
  to: string;
}

export const NO_FILTERS: AuditFilters = { actions: [], userId: "", apiKeyId: "", subject: "", outcome: "", from: "", to: "" };

/**
 * The outcomes a call can have (docs/audit.md, docs/api-errors.md): OK, or the error code the caller
 * got; UNKNOWN for a call whose API instance stopped before its end was recorded. Another value in
 * the address is offered as it is.
 */
export const OUTCOMES = ["OK", "UNAUTHENTICATED", "FORBIDDEN", "BAD_USER_INPUT", "NOT_FOUND", "ABORTED", "FAILED_PRECONDITION", "RESOURCE_EXHAUSTED", "RATE_LIMITED", "INTERNAL_SERVER_ERROR", "UNKNOWN"];

/** Entries in each page. */
export const AUDIT_PAGE = 50;

const validIso = addressInstant;

/** The most mutation names an address's action= filters by (the schema has fewer mutations). */
export const MAX_ACTIONS = 100;

/** "createJob, deleteJob" → ["createJob", "deleteJob"]: names split on commas or spaces, each once. */
export function parseActions(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).map((a) => a.trim()).filter(Boolean))];
}

export function filtersFromSearch(search: string): AuditFilters {
  const q = new URLSearchParams(search);
  const get = (k: string) => (q.get(k) ?? "").trim().slice(0, 200);
  return {
    // Whole names only: the list is not cut inside a name (the API refuses a name that is no mutation).
    actions: parseActions(q.get("action") ?? "").slice(0, MAX_ACTIONS),
    userId: get("user"),
    apiKeyId: get("key"),
    subject: get("subject"),
    outcome: get("outcome").toUpperCase(),
    from: validIso(get("from")),
    to: validIso(get("to")),
  };
}

/**
 * What the address asks for that is no filter (a time that is not one), with what is allowed: the
 * trail leaves it out, and says so above the list instead of showing every entry as if nothing had
 * been asked. An action or outcome there is none of is sent as it is: the API refuses it, naming
 * those there are.
 */
export function ignoredFilters(search: string): string[] {
  const q = new URLSearchParams(search);
  const shown = (v: string) => (v.length > 40 ? `${v.slice(0, 40)}…` : v);
  const out: string[] = [];
  for (const [key, words] of [["from", "from any time"], ["to", "up to any time"]] as const) {
    const v = (q.get(key) ?? "").trim();
    if (v && !validIso(v)) out.push(`${key}=${shown(v)} in the address is not a date and time (such as 2026-01-31T09:00:00Z). Showing entries ${words}.`);
  }
  const actions = parseActions(q.get("action") ?? "");
  if (actions.length > MAX_ACTIONS) out.push(`action= in the address names ${actions.length} mutations; the trail filters by at most ${MAX_ACTIONS}: showing entries of the first ${MAX_ACTIONS} (up to ${shown(actions[MAX_ACTIONS - 1]!)}).`);
  return out;
}

export function filtersToSearch(f: AuditFilters): string {
  const q = new URLSearchParams();
  if (f.actions.length > 0) q.set("action", f.actions.join(","));
  if (f.userId) q.set("user", f.userId);
  if (f.apiKeyId) q.set("key", f.apiKeyId);
  if (f.subject) q.set("subject", f.subject);
  if (f.outcome) q.set("outcome", f.outcome);
  if (f.from) q.set("from", f.from);
  if (f.to) q.set("to", f.to);
  const s = q.toString();
  return s ? `?${s}` : "";
}

export function activeFilterCount(f: AuditFilters): number {
  return [f.actions.length > 0, f.userId, f.apiKeyId, f.subject, f.outcome, f.from, f.to].filter(Boolean).length;
}

/** The API's `auditLog(filter:)`, or null for no filter. */
export function auditFilter(f: AuditFilters): AuditLogFilter | null {
  const filter: AuditLogFilter = {
    ...(f.actions.length > 0 ? { actions: f.actions } : {}),
    ...(f.userId ? { actorUserId: f.userId } : {}),
    ...(f.apiKeyId ? { actorApiKeyId: f.apiKeyId } : {}),
    ...(f.subject ? { targetId: f.subject } : {}),
    ...(f.outcome ? { outcome: f.outcome } : {}),
    ...(f.from ? { from: f.from } : {}),
    ...(f.to ? { to: f.to } : {}),
  };
  return Object.keys(filter).length > 0 ? filter : null;
}
