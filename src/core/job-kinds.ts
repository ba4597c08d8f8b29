/**
 * The job kinds beyond COMMAND, as submitted: SCRIPT, BINARY and HTTP specs checked and turned into
 * what is stored (docs/job-kinds.md). Pure, like spec.ts: an artifact a spec names is resolved by
 * the caller (an {@link ArtifactLookup}) and passed in.
 */
import type { Principal } from "../auth/index.js";
import { HTTP_METHODS, SCRIPT_INTERPRETERS, ValidationError, isScriptInterpreter, unpairedSurrogateProblem, urlParseProblem } from "../domain/index.js";
import type { SpecArtifact, BinarySpec, HttpMethod, HttpSpec, ResourceRequest, ScriptSpec } from "../domain/index.js";

/** Most bytes of a SCRIPT's arguments (its strings, with their terminators). */
export const MAX_ARGS_BYTES = 64 * 1024;
/** Most bytes of an inline script (UTF-8). */
export const MAX_SCRIPT_SOURCE_BYTES = 1024 * 1024;
/** Most bytes of an HTTP job's request body (UTF-8). */
export const MAX_HTTP_BODY_BYTES = 1024 * 1024;
export const MAX_HTTP_URL_LENGTH = 8 * 1024;
export const MAX_HTTP_HEADERS = 64;
export const MAX_ARGS = 1_024;
/** An HTTP job's timeout when it gives none. */
export const HTTP_DEFAULT_TIMEOUT_MS = 30_000;

/**
 * What an HTTP attempt reserves of its node: it spawns nothing and holds one socket, so it takes a
 * slot (concurrency) but next to no CPU or memory of the node's capacity.
 */
export const HTTP_RESOURCES: Readonly<ResourceRequest> = Object.freeze({ cpu: 0.01, memoryMb: 16, pids: 8, diskMb: 1 });

/** Headers an HTTP job may not set: the transport's own, and the ones Kairos signs the request with. */
const RESERVED_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer", "keep-alive", "proxy-connection", "expect"]);
const HEADER_NAME_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,256}$/;

export interface HttpInput {
  method?: string | null;
  url: string;
  headers?: Record<string, string> | null;
  body?: string | null;
  /** Each "200", "2xx" or "200-204"; default ["2xx"]. */
  successStatuses?: string[] | null;
}

/** The kind-specific fields of a submitted spec. */
export interface KindInput {
  kind: string;
  interpreter?: string | null;
  source?: string | null;
  artifactId?: string | null;
  args?: string[] | null;
  http?: HttpInput | null;
}

/**
 * Resolves the artifact a spec names for its submitter: a COMPLETE artifact the caller may use,
 * or an error (NotFoundError for one that does not exist or is not theirs, ValidationError for one
 * not completed). Wired by the composition root to the artifacts service.
 */
export interface ArtifactLookup {
  forJob(caller: Principal, artifactId: string): Promise<SpecArtifact>;
}

/**
 * The artifact `spec` names, resolved for `caller` (null when it names none, or its kind takes
 * none: validateSpec refuses that with the kinds that do).
 */
export async function specArtifact(caller: Principal, spec: KindInput, lookup: ArtifactLookup | null | undefined): Promise<SpecArtifact | null> {
  if (spec.artifactId == null || (spec.kind !== "SCRIPT" && spec.kind !== "BINARY")) return null;
  // The spec's shape is refused before any lookup (validateSpec says the same).
  if (spec.kind === "SCRIPT" && spec.source != null) throw new ValidationError("spec", SCRIPT_ONE_OF);
  if (!lookup) {
    throw new ValidationError("spec.artifactId", "this server has no artifact store (S3) configured, so jobs cannot run uploaded artifacts; give a SCRIPT's source inline instead");
  }
  if (typeof spec.artifactId !== "string" || !/^[0-9a-f]{24}$/.test(spec.artifactId)) throw new ValidationError("spec.artifactId", `"${String(spec.artifactId).slice(0, 40)}" is not an artifact id`);
  return lookup.forJob(caller, spec.artifactId);
}

const SCRIPT_ONE_OF = "a SCRIPT job gives exactly one of source (the script's text, at most 1 MiB) or artifactId (an uploaded script)";

/** Which kind each kind-specific field belongs to, for the refusal of a field given to another kind. */
const FIELD_KINDS: Record<"command" | "argv" | "interpreter" | "source" | "artifactId" | "args" | "http", string> = {
  command: "COMMAND",
  argv: "COMMAND",
  interpreter: "SCRIPT",
  source: "SCRIPT",
  artifactId: "SCRIPT or BINARY",
  args: "SCRIPT or BINARY",
  http: "HTTP",
};

/** Refuses the kind-specific fields that `kind` does not take, naming the kinds that do. */
export function refuseForeignFields(kind: string, spec: Record<string, unknown>): void {
  for (const [field, kinds] of Object.entries(FIELD_KINDS)) {
    if (spec[field] != null && !kinds.split(" or ").includes(kind)) {
      throw new ValidationError(`spec.${field}`, `applies to ${kinds} jobs only, not ${kind}`);
    }
  }
}

function refuseNul(field: string, value: string): void {
  if (value.includes("\u0000")) throw new ValidationError(field, "must not contain a NUL byte (\\u0000)");
  // Stored, an unpaired surrogate becomes U+FFFD: the program would run with other text than given.
  const unpaired = unpairedSurrogateProblem(value);
  if (unpaired) throw new ValidationError(field, unpaired);
}

function checkArgs(args: string[] | null | undefined): string[] {
  const list = args ?? [];
  if (list.length > MAX_ARGS) throw new ValidationError("spec.args", `at most ${MAX_ARGS} arguments`);
  list.forEach((a, i) => refuseNul(`spec.args[${i}]`, a));
  const bytes = list.reduce((n, a) => n + Buffer.byteLength(a) + 1, 0);
  if (bytes > MAX_ARGS_BYTES) throw new ValidationError("spec.args", `the arguments come to ${bytes} bytes; at most ${MAX_ARGS_BYTES} (64 KiB) in all`);
  return [...list];
}

export function validateScript(input: KindInput, artifact: SpecArtifact | null): ScriptSpec {
  const interpreter = input.interpreter;
  if (interpreter == null || interpreter === "") {
    throw new ValidationError("spec.interpreter", `a SCRIPT job names its interpreter; allowed: ${SCRIPT_INTERPRETERS.join(", ")}`);
  }
  if (!isScriptInterpreter(interpreter)) {
    throw new ValidationError("spec.interpreter", `"${interpreter}" is not an interpreter Kairos runs; allowed: ${SCRIPT_INTERPRETERS.join(", ")}`);
  }
  const hasSource = input.source != null;
  const hasArtifact = input.artifactId != null;
  if (hasSource === hasArtifact) throw new ValidationError("spec", SCRIPT_ONE_OF);
  if (hasSource) {
    const source = input.source!;
    if (source.trim() === "") throw new ValidationError("spec.source", "must not be empty");
    const bytes = Buffer.byteLength(source, "utf8");
    if (bytes > MAX_SCRIPT_SOURCE_BYTES) {
      throw new ValidationError("spec.source", `is ${bytes} bytes; at most ${MAX_SCRIPT_SOURCE_BYTES} (1 MiB) inline; upload a larger script as an artifact (up to 10 MB) and give its artifactId`);
    }
    refuseNul("spec.source", source);
  }
  if (hasArtifact && !artifact) throw new ValidationError("spec.artifactId", "could not be resolved");
  return { interpreter, source: hasSource ? input.source! : null, artifact: hasArtifact ? artifact : null, args: checkArgs(input.args) };
}

export function validateBinary(input: KindInput, artifact: SpecArtifact | null): BinarySpec {
  if (input.artifactId == null) throw new ValidationError("spec.artifactId", "a BINARY job names the uploaded executable to run (createArtifactUpload, then completeArtifactUpload)");
  if (!artifact) throw new ValidationError("spec.artifactId", "could not be resolved");
  return { artifact, args: checkArgs(input.args) };
}

/** Parses one success-status entry: "204", "2xx", "200-299". */
function statusRange(raw: string, i: number): [number, number] {
  const field = `spec.http.successStatuses[${i}]`;
  const s = raw.trim().toLowerCase();
  let lo: number;
  let hi: number;
  const m = /^([1-5])xx$/.exec(s);
  if (m) {
    lo = Number(m[1]) * 100;
    hi = lo + 99;
  } else {
    const r = /^(\d{3})(?:-(\d{3}))?$/.exec(s);
    if (!r) throw new ValidationError(field, `"${raw}" is not a status ("204"), a class ("2xx") or a range ("200-299")`);
    lo = Number(r[1]);
    hi = r[2] === undefined ? lo : Number(r[2]);
  }
  if (lo < 100 || hi > 599 || lo > hi) throw new ValidationError(field, `"${raw}": statuses are 100–599, low to high`);
  return [lo, hi];
}

export function validateHttp(input: KindInput): HttpSpec {
  const h = input.http;
  if (!h) throw new ValidationError("spec.http", "an HTTP job gives its request: http { method, url, headers, body, successStatuses }");
  const method = (h.method ?? "POST").toUpperCase();
  if (!(HTTP_METHODS as readonly string[]).includes(method)) throw new ValidationError("spec.http.method", `"${h.method}" is not one of ${HTTP_METHODS.join(", ")}`);
  if (typeof h.url !== "string" || h.url.length === 0) throw new ValidationError("spec.http.url", "required: an http:// or https:// URL");
  if (h.url.length > MAX_HTTP_URL_LENGTH) throw new ValidationError("spec.http.url", `at most ${MAX_HTTP_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(h.url);
  } catch {
    throw new ValidationError("spec.http.url", `${urlParseProblem(h.url)}; give an absolute http:// or https:// URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ValidationError("spec.http.url", `scheme "${url.protocol}" is not allowed; allowed: http, https`);
  if (url.username || url.password) throw new ValidationError("spec.http.url", "must not carry credentials (user:password@); send them in a header (e.g. Authorization)");
  if (url.hostname === "") throw new ValidationError("spec.http.url", "names no host");
  const headers: Record<string, string> = {};
  const given = h.headers ?? {};
  const names = Object.keys(given);
  if (names.length > MAX_HTTP_HEADERS) throw new ValidationError("spec.http.headers", `at most ${MAX_HTTP_HEADERS} headers`);
  const seen = new Set<string>();
  for (const name of names) {
    const value = given[name];
    if (!HEADER_NAME_RE.test(name)) throw new ValidationError("spec.http.headers", `"${name.slice(0, 100)}" is not a header name (letters, digits and !#$%&'*+-.^_\`|~)`);
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower)) throw new ValidationError("spec.http.headers", `"${name}" is set by the executor and may not be given`);
    if (lower.startsWith("kairos-")) throw new ValidationError("spec.http.headers", `"${name}": headers starting with Kairos- are the executor's (signature, run id, attempt)`);
    if (seen.has(lower)) throw new ValidationError("spec.http.headers", `"${name}" is given twice (names are case-insensitive)`);
    seen.add(lower);
    if (typeof value !== "string") throw new ValidationError("spec.http.headers", `value of "${name}" must be a string`);
    // What HTTP/1.1 (and Node's client) can send, less the C1 controls: tab, space, visible ASCII, Latin-1.
    if (/[^\t\x20-\x7e\xa0-\xff]/.test(value)) {
      throw new ValidationError("spec.http.headers", `value of "${name}" may hold only tab, space, visible ASCII and Latin-1 characters (U+00A0–U+00FF): no CR, LF, NUL or other control character, nor any character above U+00FF (percent- or base64-encode such text)`);
    }
    if (value.length > 8_192) throw new ValidationError("spec.http.headers", `value of "${name}" is longer than 8192 characters`);
    headers[name] = value;
  }
  const body = h.body ?? null;
  if (body !== null) {
    if (method === "GET" || method === "HEAD") throw new ValidationError("spec.http.body", `a ${method} request has no body; use POST, PUT, PATCH or DELETE to send one`);
    const bytes = Buffer.byteLength(body, "utf8");
    if (bytes > MAX_HTTP_BODY_BYTES) throw new ValidationError("spec.http.body", `is ${bytes} bytes; at most ${MAX_HTTP_BODY_BYTES} (1 MiB)`);
  }
  const statuses = h.successStatuses ?? ["2xx"];
  if (statuses.length === 0 || statuses.length > 32) throw new ValidationError("spec.http.successStatuses", "give 1 to 32 entries, e.g. [\"2xx\", \"304\"]");
  return { method: method as HttpMethod, url: url.toString(), headers, body, successStatuses: statuses.map(statusRange) };
}

/** Whether `status` counts as success for `spec`. */
export function isSuccessStatus(spec: Pick<HttpSpec, "successStatuses">, status: number): boolean {
  return spec.successStatuses.some(([lo, hi]) => status >= lo && status <= hi);
}

/** "200-299" / "204" for display. */
export function formatStatusRange([lo, hi]: [number, number]): string {
  if (lo === hi) return String(lo);
  if (lo % 100 === 0 && hi === lo + 99) return `${lo / 100}xx`;
  return `${lo}-${hi}`;
}
