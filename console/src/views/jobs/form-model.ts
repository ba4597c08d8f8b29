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

export function isoOf(d: Duration): string | null {
  const t = d.n.trim();
  if (!t) return null;
  return d.unit === "D" ? `P${t}D` : `PT${t}${d.unit}`;
}

const SECONDS: Record<Unit, number> = { S: 1, M: 60, H: 3600, D: 86400 };

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

/** NAME=value lines → an object (a line without "=" is a name with an empty value). */
function pairs(t: string, sep: "=" | ":"): Record<string, string> | undefined {
  const out: Record<string, string> = {};
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
