/**
 * The job editor's state and its translation to and from the API's inputs (CreateJobInput,
 * UpdateJobInput, ScheduleInput). Plain functions: no React.
 */
import type {
  ConsoleJobDetailFragment,
  CreateJobInput,
  JobSpecInput,
  OverlapPolicy,
  MisfirePolicy,
  RetryInput,
  ScheduleInput,
  UpdateJobInput,
} from "../../../../generated/client/graphql";
import { YOUR_ZONE } from "./fires";

export type ScheduleMode = "NOW" | "AT" | "DELAY" | "EVERY" | "CRON";
export type Unit = "S" | "M" | "H" | "D";
export interface Duration { n: string; unit: Unit }

export interface ScheduleState {
  mode: ScheduleMode;
  /** datetime-local text, read in the browser's zone. */
  at: string;
  delay: Duration;
  every: Duration;
  cron: string;
  timezone: string;
  dstGap: "SHIFT" | "SKIP";
  dstRepeat: "FIRST" | "LAST" | "BOTH";
}

export type Kind = "COMMAND" | "SCRIPT" | "HTTP";

export interface FormState {
  name: string;
  description: string;
  kind: Kind;
  commandMode: "shell" | "argv";
  command: string;
  argv: string;
  interpreter: string;
  source: string;
  args: string;
  httpMethod: string;
  httpUrl: string;
  httpHeaders: string;
  httpBody: string;
  httpSuccess: string;
  env: string;
  network: "NONE" | "EGRESS";
  schedule: ScheduleState;
  timeout: Duration;
  priority: string;
  pool: string;
  tags: string;
  retryAttempts: string;
  retryBackoff: "EXPONENTIAL" | "FIXED";
  retryInitial: Duration;
  retryMax: Duration;
  cpu: string;
  memoryMb: string;
  pids: string;
  diskMb: string;
  overlap: OverlapPolicy;
  misfire: MisfirePolicy;
  paused: boolean;
}

export const INTERPRETERS = ["bash", "sh", "python3", "node"];
export const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

export function emptyForm(): FormState {
  return {
    name: "",
    description: "",
    kind: "COMMAND",
    commandMode: "shell",
    command: "",
    argv: "",
    interpreter: "bash",
    source: "",
    args: "",
    httpMethod: "POST",
    httpUrl: "",
    httpHeaders: "",
    httpBody: "",
    httpSuccess: "2xx",
    env: "",
    network: "NONE",
    schedule: { mode: "NOW", at: "", delay: { n: "15", unit: "M" }, every: { n: "1", unit: "H" }, cron: "", timezone: YOUR_ZONE || "UTC", dstGap: "SHIFT", dstRepeat: "FIRST" },
    timeout: { n: "", unit: "M" },
    priority: "",
    pool: "",
    tags: "",
    retryAttempts: "",
    retryBackoff: "EXPONENTIAL",
    retryInitial: { n: "", unit: "S" },
    retryMax: { n: "", unit: "M" },
    cpu: "",
    memoryMb: "",
    pids: "",
    diskMb: "",
    overlap: "ALLOW",
    misfire: "FIRE_ONCE",
    paused: false,
  };
}

// ---- durations: ISO-8601 ⇄ a number and a unit ----

const SECONDS: Record<Unit, number> = { S: 1, M: 60, H: 3600, D: 86400 };

/** Whole seconds (and a fraction of the last one) as the API's canonical duration: 5400 → "PT1H30M". */
function isoOfSeconds(total: number): string {
  const ms = Math.round(total * 1000);
  const d = Math.floor(ms / 86_400_000);
  const h = Math.floor((ms % 86_400_000) / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const sec = (ms % 60_000) / 1000;
  const time = `${h ? `${h}H` : ""}${m ? `${m}M` : ""}${sec ? `${sec}S` : ""}`;
  return `P${d ? `${d}D` : ""}${time ? `T${time}` : d ? "" : "T0S"}`;
}

/**
 * A number and a unit as an ISO-8601 duration. A fraction of a unit the API takes only whole (1.5
 * hours) is written in smaller units ("PT1H30M"); an amount that is not a number is passed on as
 * typed (durationProblem says what is wrong with it before anything is sent).
 */
export function isoOf(d: Duration): string | null {
  const t = d.n.trim();
  if (!t) return null;
  const n = Number(t);
  if (/^\d+$/.test(t) || !Number.isFinite(n) || n <= 0) return d.unit === "D" ? `P${t}D` : `PT${t}${d.unit}`;
  return isoOfSeconds(n * SECONDS[d.unit]);
}

const UNIT_WORDS: Record<Unit, string> = { S: "seconds", M: "minutes", H: "hours", D: "days" };

/** What is wrong with a duration's amount as typed (null: nothing; an empty amount is left out). */
export function durationProblem(d: Duration): string | null {
  const t = d.n.trim();
  if (!t) return null;
  const n = Number(t);
  if (!Number.isFinite(n)) return `"${t}" ${UNIT_WORDS[d.unit]} is not an amount of time: give a number above 0, such as 30`;
  if (n <= 0) return `must be above 0 (got ${t} ${UNIT_WORDS[d.unit]})`;
  if (n * SECONDS[d.unit] < 0.001) return `must be at least 1 millisecond (got ${t} ${UNIT_WORDS[d.unit]})`;
  if (n * SECONDS[d.unit] > 36_500 * 86_400) return `must be at most 100 years, 36500 days (got ${t} ${UNIT_WORDS[d.unit]})`;
  return null;
}

const INT_MAX = 2 ** 31 - 1;

/**
 * The form's own check of what it sends, before the API's: an amount of time that is not one, and
 * a whole-number field holding a fraction or more than the API's integers hold. Sent as they are,
 * those came back as the GraphQL layer's text ("Variable "$input" got invalid value 2.5 at
 * "input.priority"; Int cannot represent non-integer value: 2.5", "PT-5M is not an ISO-8601
 * duration") instead of a sentence about the field. Ranges are left to the API, which names them.
 * Also an environment or header line without its "=" or ":" (it was sent as a name with no value).
 */
export function formProblem(f: FormState): { field: string; message: string } | null {
  const durations: Array<[string, Duration, boolean]> = [
    ["spec.timeout", f.timeout, true],
    ["schedule.delay", f.schedule.delay, f.schedule.mode === "DELAY"],
    ["schedule.every", f.schedule.every, f.schedule.mode === "EVERY"],
    ["retry.initial", f.retryInitial, (num(f.retryAttempts) ?? 1) > 1],
    ["retry.max", f.retryMax, (num(f.retryAttempts) ?? 1) > 1],
  ];
  const mode = f.schedule.mode;
  if (mode === "AT" && !Number.isFinite(Date.parse(f.schedule.at))) {
    return { field: "schedule.at", message: "schedule.at: give the date and time to run at (in this browser's time zone)" };
  }
  if (mode === "DELAY" && !f.schedule.delay.n.trim()) return { field: "schedule.delay", message: "schedule.delay: give how long to wait before the run, a number above 0" };
  if (mode === "EVERY" && !f.schedule.every.n.trim()) return { field: "schedule.every", message: "schedule.every: give how often to run, a number above 0" };
  for (const [field, d, used] of durations) {
    const p = used ? durationProblem(d) : null;
    if (p) return { field, message: `${field}: ${p}` };
  }
  const sandboxed = f.kind !== "HTTP";
  const ints: Array<[string, string, string, boolean]> = [
    ["priority", f.priority, "a whole number from 0 to 9", true],
    ["retry.maxAttempts", f.retryAttempts, "a whole number from 1 (no retry) to 100", true],
    ["spec.resources.memoryMb", f.memoryMb, "a whole number of MiB from 16 to 4194304", sandboxed],
    ["spec.resources.pids", f.pids, "a whole number of processes from 8 to 4194304", sandboxed],
    ["spec.resources.diskMb", f.diskMb, "a whole number of MiB from 1 to 16777216", sandboxed],
  ];
  for (const [field, text, allowed, used] of ints) {
    const n = num(text);
    if (used && n !== undefined && (!Number.isInteger(n) || Math.abs(n) > INT_MAX)) return { field, message: `${field}: must be ${allowed} (got ${text.trim()})` };
  }
  const cpu = num(f.cpu);
  if (sandboxed && cpu !== undefined && !Number.isFinite(cpu)) return { field: "spec.resources.cpu", message: `spec.resources.cpu: must be a number of cores from 0.01 to 1024 (got ${f.cpu.trim()})` };
  const list = sandboxed ? pairsProblem("spec.env", f.env, "=") : pairsProblem("spec.http.headers", f.httpHeaders, ":");
  if (list) return list;
  return null;
}

/**
 * The first line of a NAME=value (environment) or Name: value (headers) list that is not one. A
 * line without the separator was taken for a name with an empty value, and sent.
 */
export function pairsProblem(field: string, text: string, sep: "=" | ":"): { field: string; message: string } | null {
  const form = sep === "=" ? "NAME=value (NAME= for an empty value)" : "Name: value (Name: for an empty value)";
  const all = text.split("\n");
  // Where each name was given first: a second line of it replaced the first's value, silently.
  // Header names are one whatever their case (HTTP); variable names are not.
  const firstAt = new Map<string, number>();
  for (let i = 0; i < all.length; i++) {
    const l = all[i]!.trim();
    if (!l) continue;
    const at = l.indexOf(sep);
    const shown = l.length > 40 ? `${l.slice(0, 40)}…` : l;
    const name = at > 0 ? l.slice(0, at).trim() : "";
    if (name) {
      const key = sep === ":" ? name.toLowerCase() : name;
      const before = firstAt.get(key);
      if (before === undefined) {
        firstAt.set(key, i + 1);
        continue;
      }
      return { field, message: `${field}: line ${i + 1}, "${shown}", names ${name} again (line ${before}${sep === ":" ? ", whatever the case" : ""}): give each ${sep === "=" ? "variable" : "header"} once` };
    }
    const what = at < 0 ? `has no "${sep}"` : `has no name before "${sep}"`;
    return { field, message: `${field}: line ${i + 1}, "${shown}", ${what}: write each line as ${form}` };
  }
  return null;
}

/** "PT1H30M" → 90 minutes; "P2D" → 2 days; unreadable → seconds, or empty. */
export function durationOf(iso: string | null | undefined, fallback: Unit = "S"): Duration {
  if (!iso) return { n: "", unit: fallback };
  const m = /^P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(iso);
  if (!m) return { n: "", unit: fallback };
  const s = Number(m[1] ?? 0) * 604800 + Number(m[2] ?? 0) * 86400 + Number(m[3] ?? 0) * 3600 + Number(m[4] ?? 0) * 60 + Number(m[5] ?? 0);
  for (const u of ["D", "H", "M"] as Unit[]) if (s > 0 && s % SECONDS[u] === 0) return { n: String(s / SECONDS[u]), unit: u };
  return { n: String(s), unit: "S" };
}

// ---- lists typed as text ----

const lines = (t: string) => t.split("\n").map((l) => l.trim()).filter(Boolean);
const commaList = (t: string) => t.split(",").map((x) => x.trim()).filter(Boolean);
const num = (t: string) => (t.trim() === "" ? undefined : Number(t));

/** NAME=value lines → an object (formProblem has refused a line without the separator before this is sent). */
function pairs(t: string, sep: "=" | ":"): Record<string, string> | undefined {
  // No prototype: a variable named __proto__ is one (it set the object's prototype, and was lost).
  const out = Object.create(null) as Record<string, string>;
  for (const l of lines(t)) {
    const i = l.indexOf(sep);
    if (i < 0) out[l] = "";
    else out[l.slice(0, i).trim()] = l.slice(i + 1).trim();
  }
  return Object.keys(out).length ? out : undefined;
}

function pairsText(o: Record<string, unknown> | null | undefined, sep: "=" | ": "): string {
  return Object.entries(o ?? {}).map(([k, v]) => `${k}${sep}${String(v)}`).join("\n");
}

// ---- to the API ----

/** datetime-local text (the browser's zone) → an ISO instant; unreadable text is passed on for the API to refuse. */
function instantOf(local: string): string {
  const ms = Date.parse(local);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : local;
}

export function scheduleInput(s: ScheduleState): ScheduleInput {
  switch (s.mode) {
    case "NOW":
      return { kind: "ONCE" };
    case "AT":
      return { kind: "ONCE", at: instantOf(s.at) };
    case "DELAY":
      return { kind: "ONCE", delay: isoOf(s.delay) ?? "" };
    case "EVERY":
      return { kind: "INTERVAL", every: isoOf(s.every) ?? "", timezone: s.timezone.trim() || undefined };
    case "CRON":
      return { kind: "CRON", cron: s.cron, timezone: s.timezone.trim() || undefined, dstGap: s.dstGap, dstRepeat: s.dstRepeat };
  }
}

export function specInput(f: FormState): JobSpecInput {
  const common = {
    timeout: isoOf(f.timeout) ?? undefined,
    pool: f.pool.trim() || undefined,
  };
  if (f.kind === "HTTP") {
    return {
      kind: "HTTP",
      ...common,
      http: {
        method: f.httpMethod,
        url: f.httpUrl.trim(),
        headers: pairs(f.httpHeaders, ":"),
        body: f.httpBody === "" ? undefined : f.httpBody,
        successStatuses: f.httpSuccess.trim() ? commaList(f.httpSuccess) : undefined,
      },
    };
  }
  const resources = {
    cpu: num(f.cpu),
    memoryMb: num(f.memoryMb),
    pids: num(f.pids),
    diskMb: num(f.diskMb),
  };
  const hasResources = Object.values(resources).some((v) => v !== undefined);
  const sandboxed = {
    ...common,
    env: pairs(f.env, "="),
    network: f.network,
    ...(hasResources ? { resources } : {}),
  };
  if (f.kind === "SCRIPT") {
    return { kind: "SCRIPT", ...sandboxed, interpreter: f.interpreter, source: f.source, args: lines(f.args).length ? lines(f.args) : undefined };
  }
  return f.commandMode === "argv"
    ? { kind: "COMMAND", ...sandboxed, argv: lines(f.argv) }
    : { kind: "COMMAND", ...sandboxed, command: f.command };
}

function retryInput(f: FormState): RetryInput | undefined {
  const attempts = num(f.retryAttempts);
  if (attempts === undefined) return undefined;
  return {
    maxAttempts: attempts,
    ...(attempts > 1 ? { backoff: f.retryBackoff, initial: isoOf(f.retryInitial) ?? undefined, max: isoOf(f.retryMax) ?? undefined } : {}),
  };
}

export function createInput(f: FormState): CreateJobInput {
  return {
    name: f.name.trim(),
    description: f.description.trim() || undefined,
    schedule: scheduleInput(f.schedule),
    spec: specInput(f),
    retry: retryInput(f),
    priority: num(f.priority),
    tags: commaList(f.tags).length ? commaList(f.tags) : undefined,
    overlap: f.overlap,
    misfire: f.misfire,
    paused: f.paused || undefined,
  };
}

/** What changed since the form was loaded: only those parts are sent (an unchanged ONCE schedule is not re-armed). */
export function updateInput(f: FormState, loaded: FormState): UpdateJobInput {
  const now = createInput(f);
  const was = createInput(loaded);
  const out: UpdateJobInput = {};
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  if (!same(now.name, was.name)) out.name = now.name;
  if (!same(now.description, was.description)) out.description = now.description ?? "";
  if (!same(now.schedule, was.schedule)) out.schedule = now.schedule;
  if (!same(now.spec, was.spec)) out.spec = now.spec;
  if (!same(now.retry, was.retry)) out.retry = now.retry;
  if (!same(now.priority, was.priority)) out.priority = now.priority;
  if (!same(now.tags, was.tags)) out.tags = now.tags ?? [];
  if (now.overlap !== was.overlap) out.overlap = now.overlap;
  if (now.misfire !== was.misfire) out.misfire = now.misfire;
  return out;
}

// ---- from the API (editing) ----

function localInput(iso: string | null): string {
  if (!iso) return "";
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function formOf(job: ConsoleJobDetailFragment): FormState {
  const base = emptyForm();
  const s = job.schedule;
  const spec = job.spec;
  const mode: ScheduleMode = s.kind === "CRON" ? "CRON" : s.kind === "INTERVAL" ? "EVERY" : "AT";
  const kind: Kind = spec.kind === "HTTP" ? "HTTP" : spec.kind === "SCRIPT" ? "SCRIPT" : "COMMAND";
  return {
    ...base,
    name: job.name,
    description: job.description ?? "",
    kind,
    commandMode: spec.argv ? "argv" : "shell",
    command: spec.command ?? "",
    argv: (spec.argv ?? []).join("\n"),
    interpreter: spec.interpreter ?? "bash",
    source: spec.source ?? "",
    args: (spec.args ?? []).join("\n"),
    httpMethod: spec.http?.method ?? "POST",
    httpUrl: spec.http?.url ?? "",
    httpHeaders: pairsText(spec.http?.headers, ": "),
    httpBody: spec.http?.body ?? "",
    httpSuccess: (spec.http?.successStatuses ?? ["2xx"]).join(", "),
    env: pairsText(spec.env, "="),
    network: spec.network,
    schedule: {
      ...base.schedule,
      mode,
      at: localInput(s.at),
      every: s.every ? durationOf(s.every, "H") : base.schedule.every,
      cron: s.cron ?? "",
      timezone: s.timezone,
      dstGap: s.dstGap,
      dstRepeat: s.dstRepeat,
    },
    timeout: durationOf(spec.timeout, "M"),
    priority: String(job.priority),
    pool: spec.pool,
    tags: job.tags.join(", "),
    retryAttempts: String(job.retry.maxAttempts),
    retryBackoff: job.retry.backoff,
    retryInitial: durationOf(job.retry.initial, "S"),
    retryMax: durationOf(job.retry.max, "M"),
    cpu: kind === "HTTP" ? "" : String(spec.resources.cpu),
    memoryMb: kind === "HTTP" ? "" : String(spec.resources.memoryMb),
    pids: kind === "HTTP" || spec.resources.pids == null ? "" : String(spec.resources.pids),
    diskMb: kind === "HTTP" || spec.resources.diskMb == null ? "" : String(spec.resources.diskMb),
    overlap: job.overlap,
    misfire: job.misfire,
  };
}
