/**
 * What `kairos apply` compares: a file's document and the job or DAG the API returns, both brought
 * to one canonical form with the server's own normalization (src/timing: schedules, retry policies,
 * durations) and its defaults, so that a second apply of the same files finds nothing to change.
 *
 * Fields left out of a file mean their default (description none, no tags, priority 5, misfire
 * FIRE_ONCE, overlap ALLOW, the default retry policy, pool "default", ...), so removing a line
 * from a file is a change. Three things are compared only when the file gives them, because their
 * default is not fixed: `paused` (an operator's pause is kept unless the file says), `catchupWindow`
 * (a server setting) and `spec.resources` (the pool's nodes' defaults); and a schedule's `at` and
 * `startAt` when the file leaves them to "now" (a ONCE job with `delay` or without `at` is not
 * fired again by a later apply).
 */
import type { CliDagFieldsFragment, CliJobFieldsFragment, CreateDagInput, CreateJobInput, JobSpecInput, RetryInput, ScheduleInput } from "../../generated/client/graphql.js";
import { normalizeRetry, normalizeSchedule, normalizeTimeout, parseDuration } from "../timing/index.js";
import { timingSchedule } from "./documents.js";

/** A field's canonical value (compared) and how to show it. */
type Flat = Map<string, { cmp: string; show: unknown }>;

export interface FieldChange {
  field: string;
  change: "added" | "changed" | "removed";
  from?: unknown;
  to?: unknown;
}

const ms = (d: string | null | undefined): number | null => (d == null ? null : parseDuration(d, "duration"));
const time = (d: string | null | undefined): number | null => (d == null ? null : Date.parse(d));
const empty = (v: unknown) => v == null || (Array.isArray(v) && v.length === 0) || (typeof v === "object" && v !== null && Object.keys(v).length === 0);

function put(flat: Flat, field: string, cmp: unknown, show: unknown = cmp): void {
  flat.set(field, { cmp: JSON.stringify(cmp ?? null, sortKeys), show: show ?? null });
}

function sortKeys(_k: string, v: unknown): unknown {
  if (v && typeof v === "object" && !Array.isArray(v)) {
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)));
  }
  return v;
}

type ServerSchedule = CliJobFieldsFragment["schedule"];
type ServerSpec = CliJobFieldsFragment["spec"];
type ServerRetry = CliJobFieldsFragment["retry"];

/** The canonical schedule fields of a file's schedule (the keys that are compared). */
function fileSchedule(flat: Flat, prefix: string, input: ScheduleInput, now: number): void {
  const s = normalizeSchedule(timingSchedule(input), now);
  put(flat, `${prefix}.kind`, s.kind);
  put(flat, `${prefix}.timezone`, s.timezone, input.timezone ?? "UTC");
  if (s.kind === "CRON") {
    put(flat, `${prefix}.cron`, s.cron, input.cron);
    put(flat, `${prefix}.dstGap`, s.dstGap);
    put(flat, `${prefix}.dstRepeat`, s.dstRepeat);
  }
  if (s.kind === "INTERVAL") put(flat, `${prefix}.every`, s.everyMs, input.every);
  if (s.kind === "ONCE" && input.at != null) put(flat, `${prefix}.at`, s.atMs, input.at);
  if (s.kind !== "ONCE" && input.startAt != null) put(flat, `${prefix}.startAt`, time(input.startAt), input.startAt);
  if (s.kind !== "ONCE") put(flat, `${prefix}.maxFires`, s.maxFires);
  put(flat, `${prefix}.endAt`, s.endAt, input.endAt ?? null);
  put(flat, `${prefix}.jitter`, s.jitterMs, input.jitter ?? null);
  put(flat, `${prefix}.spread`, s.spreadMs, input.spread ?? null);
}

function serverSchedule(flat: Flat, prefix: string, s: ServerSchedule, keys: Flat): void {
  const want = (f: string) => keys.has(`${prefix}.${f}`);
  put(flat, `${prefix}.kind`, s.kind);
  put(flat, `${prefix}.timezone`, s.timezone);
  if (want("cron")) put(flat, `${prefix}.cron`, s.cron);
  if (want("dstGap")) put(flat, `${prefix}.dstGap`, s.dstGap);
  if (want("dstRepeat")) put(flat, `${prefix}.dstRepeat`, s.dstRepeat);
  if (want("every")) put(flat, `${prefix}.every`, ms(s.every), s.every);
  if (want("at")) put(flat, `${prefix}.at`, time(s.at), s.at);
  if (want("startAt")) put(flat, `${prefix}.startAt`, time(s.startAt), s.startAt);
  if (want("maxFires")) put(flat, `${prefix}.maxFires`, s.maxFires);
  put(flat, `${prefix}.endAt`, time(s.endAt), s.endAt);
  put(flat, `${prefix}.jitter`, ms(s.jitter) ?? 0, s.jitter);
  put(flat, `${prefix}.spread`, ms(s.spread) ?? 0, s.spread);
}

function fileRetry(flat: Flat, prefix: string, input: RetryInput | null | undefined): void {
  const r = normalizeRetry(input as Parameters<typeof normalizeRetry>[0]);
  const i = input ?? {};
  put(flat, `${prefix}.maxAttempts`, r.maxAttempts);
  put(flat, `${prefix}.backoff`, r.backoff);
  put(flat, `${prefix}.initial`, r.initialMs, i.initial ?? "PT10S");
  put(flat, `${prefix}.max`, r.maxMs, i.max ?? "(default)");
  put(flat, `${prefix}.factor`, r.factor);
  put(flat, `${prefix}.jitter`, r.jitter);
  put(flat, `${prefix}.nonRetryableExitCodes`, r.nonRetryableExitCodes);
  put(flat, `${prefix}.retryOnOomKill`, r.retryOnOomKill);
}

function serverRetry(flat: Flat, prefix: string, r: ServerRetry): void {
  put(flat, `${prefix}.maxAttempts`, r.maxAttempts);
  put(flat, `${prefix}.backoff`, r.backoff);
  put(flat, `${prefix}.initial`, ms(r.initial), r.initial);
  put(flat, `${prefix}.max`, ms(r.max), r.max);
  put(flat, `${prefix}.factor`, r.factor);
  put(flat, `${prefix}.jitter`, r.jitter);
  put(flat, `${prefix}.nonRetryableExitCodes`, [...r.nonRetryableExitCodes].sort((a, b) => a - b));
  put(flat, `${prefix}.retryOnOomKill`, r.retryOnOomKill);
}

function fileSpec(flat: Flat, prefix: string, s: JobSpecInput): void {
  const kind = s.kind ?? "COMMAND";
  put(flat, `${prefix}.kind`, kind);
  put(flat, `${prefix}.command`, s.command ?? null);
  put(flat, `${prefix}.argv`, s.argv ?? null);
  // The server keeps a SCRIPT's or BINARY's arguments as a list, empty when none were given.
  put(flat, `${prefix}.args`, s.args ?? (kind === "SCRIPT" || kind === "BINARY" ? [] : null));
  put(flat, `${prefix}.interpreter`, s.interpreter ?? null);
  put(flat, `${prefix}.source`, s.source ?? null);
  put(flat, `${prefix}.artifactId`, s.artifactId ?? null);
  put(flat, `${prefix}.env`, s.env ?? {});
  put(flat, `${prefix}.timeout`, normalizeTimeout(s.timeout), s.timeout ?? "(default)");
  put(flat, `${prefix}.pool`, s.pool ?? "default");
  put(flat, `${prefix}.network`, s.network ?? "NONE");
  if (s.http) {
    put(flat, `${prefix}.http.url`, s.http.url);
    put(flat, `${prefix}.http.method`, (s.http.method ?? "GET").toUpperCase(), s.http.method ?? "GET");
    put(flat, `${prefix}.http.body`, s.http.body ?? null);
    put(flat, `${prefix}.http.headers`, s.http.headers ?? {});
    if (s.http.successStatuses != null) put(flat, `${prefix}.http.successStatuses`, s.http.successStatuses);
  } else put(flat, `${prefix}.http`, null);
  for (const [k, v] of Object.entries(s.resources ?? {})) if (v != null) put(flat, `${prefix}.resources.${k}`, v);
}

function serverSpec(flat: Flat, prefix: string, s: ServerSpec, keys: Flat): void {
  put(flat, `${prefix}.kind`, s.kind);
  put(flat, `${prefix}.command`, s.command);
  put(flat, `${prefix}.argv`, s.argv);
  put(flat, `${prefix}.args`, s.args);
  put(flat, `${prefix}.interpreter`, s.interpreter);
  put(flat, `${prefix}.source`, s.source);
  put(flat, `${prefix}.artifactId`, s.artifact?.id ?? null);
  put(flat, `${prefix}.env`, s.env ?? {});
  put(flat, `${prefix}.timeout`, ms(s.timeout), s.timeout);
  put(flat, `${prefix}.pool`, s.pool);
  put(flat, `${prefix}.network`, s.network);
  if (s.http) {
    put(flat, `${prefix}.http.url`, s.http.url);
    put(flat, `${prefix}.http.method`, s.http.method.toUpperCase(), s.http.method);
    put(flat, `${prefix}.http.body`, s.http.body);
    put(flat, `${prefix}.http.headers`, s.http.headers ?? {});
    if (keys.has(`${prefix}.http.successStatuses`)) put(flat, `${prefix}.http.successStatuses`, s.http.successStatuses);
  } else put(flat, `${prefix}.http`, null);
  for (const [k, v] of Object.entries(s.resources)) if (keys.has(`${prefix}.resources.${k}`)) put(flat, `${prefix}.resources.${k}`, v);
}

function jobFlat(input: CreateJobInput, now: number): Flat {
  const f: Flat = new Map();
  put(f, "description", input.description || null);
  put(f, "tags", [...new Set(input.tags ?? [])]);
  put(f, "priority", input.priority ?? 5);
  put(f, "misfire", input.misfire ?? "FIRE_ONCE");
  put(f, "overlap", input.overlap ?? "ALLOW");
  if (input.catchupWindow != null) put(f, "catchupWindow", ms(input.catchupWindow), input.catchupWindow);
  if (input.paused != null) put(f, "paused", input.paused);
  fileSchedule(f, "schedule", input.schedule, now);
  fileRetry(f, "retry", input.retry);
  fileSpec(f, "spec", input.spec);
  return f;
}

function serverJobFlat(job: CliJobFieldsFragment, keys: Flat): Flat {
  const f: Flat = new Map();
  put(f, "description", job.description || null);
  put(f, "tags", job.tags);
  put(f, "priority", job.priority);
  put(f, "misfire", job.misfire);
  put(f, "overlap", job.overlap);
  if (keys.has("catchupWindow")) put(f, "catchupWindow", ms(job.catchupWindow), job.catchupWindow);
  if (keys.has("paused")) put(f, "paused", job.paused);
  serverSchedule(f, "schedule", job.schedule, keys);
  serverRetry(f, "retry", job.retry);
  serverSpec(f, "spec", job.spec, keys);
  return f;
}

function dagFlat(input: CreateDagInput, now: number): Flat {
  const f: Flat = new Map();
  put(f, "description", input.description || null);
  put(f, "failFast", input.failFast ?? false);
  put(f, "maxParallel", input.maxParallel ?? null);
  put(f, "misfire", input.misfire ?? "FIRE_ONCE");
  put(f, "overlap", input.overlap ?? "ALLOW");
  put(f, "params", input.params ?? {});
  if (input.catchupWindow != null) put(f, "catchupWindow", ms(input.catchupWindow), input.catchupWindow);
  if (input.paused != null) put(f, "paused", input.paused);
  if (input.schedule) fileSchedule(f, "schedule", input.schedule, now);
  else put(f, "schedule", null);
  for (const t of input.tasks) {
    const p = `tasks.${t.key}`;
    put(f, `${p}.dependsOn`, [...(t.dependsOn ?? [])].sort());
    put(f, `${p}.trigger`, t.trigger ?? "ALL_SUCCESS");
    put(f, `${p}.priority`, t.priority ?? 5);
    put(f, `${p}.mapOver`, t.mapOver ?? null);
    fileRetry(f, `${p}.retry`, t.retry);
    fileSpec(f, `${p}.spec`, t.spec);
  }
  return f;
}

function serverDagFlat(dag: CliDagFieldsFragment, keys: Flat): Flat {
  const f: Flat = new Map();
  put(f, "description", dag.description || null);
  put(f, "failFast", dag.failFast);
  put(f, "maxParallel", dag.maxParallel);
  put(f, "misfire", dag.misfire);
  put(f, "overlap", dag.overlap);
  put(f, "params", dag.params ?? {});
  if (keys.has("catchupWindow")) put(f, "catchupWindow", ms(dag.catchupWindow), dag.catchupWindow);
  if (keys.has("paused")) put(f, "paused", dag.paused);
  if (dag.schedule) serverSchedule(f, "schedule", dag.schedule, keys);
  else put(f, "schedule", null);
  for (const t of dag.tasks) {
    const p = `tasks.${t.key}`;
    put(f, `${p}.dependsOn`, [...t.dependsOn].sort());
    put(f, `${p}.trigger`, t.trigger);
    put(f, `${p}.priority`, t.priority);
    put(f, `${p}.mapOver`, t.mapOver);
    serverRetry(f, `${p}.retry`, t.retry);
    serverSpec(f, `${p}.spec`, t.spec, keys);
  }
  return f;
}

function diffFlat(want: Flat, have: Flat): FieldChange[] {
  const out: FieldChange[] = [];
  const fields = [...new Set([...want.keys(), ...have.keys()])];
  // A whole schedule or task that appears or goes is one change, not one per field.
  const wholes = new Set<string>();
  for (const field of fields) {
    const w = want.get(field);
    const h = have.get(field);
    if (w && h && w.cmp === h.cmp) continue;
    const task = /^tasks\.([^.]+)\./.exec(field)?.[0];
    if (task && !([...want.keys()].some((k) => k.startsWith(task)) && [...have.keys()].some((k) => k.startsWith(task)))) {
      const key = task.slice(0, -1);
      if (wholes.has(key)) continue;
      wholes.add(key);
      out.push([...want.keys()].some((k) => k.startsWith(task)) ? { field: key, change: "added" } : { field: key, change: "removed" });
      continue;
    }
    if (field === "schedule" || (field.startsWith("schedule.") && (!want.has(field) || !have.has(field)) && (want.get("schedule")?.cmp === "null" || have.get("schedule")?.cmp === "null"))) {
      if (wholes.has("schedule")) continue;
      wholes.add("schedule");
      out.push(want.get("schedule")?.cmp === "null" ? { field: "schedule", change: "removed" } : { field: "schedule", change: "added" });
      continue;
    }
    const wv = w?.show ?? null;
    const hv = h?.show ?? null;
    if (empty(hv) && !empty(wv)) out.push({ field, change: "added", to: wv });
    else if (!empty(hv) && empty(wv)) out.push({ field, change: "removed", from: hv });
    else out.push({ field, change: "changed", from: hv, to: wv });
  }
  return out;
}

export function diffJob(input: CreateJobInput, job: CliJobFieldsFragment, now: number): FieldChange[] {
  const want = jobFlat(input, now);
  return diffFlat(want, serverJobFlat(job, want));
}

export function diffDag(input: CreateDagInput, dag: CliDagFieldsFragment, now: number): FieldChange[] {
  const want = dagFlat(input, now);
  return diffFlat(want, serverDagFlat(dag, want));
}
