/**
 * The shapes of the job kinds beyond COMMAND (SCRIPT, BINARY, HTTP) and their fixed vocabularies:
 * the interpreters Kairos knows, the HTTP methods, the name of a script run's ready queue.
 */

/** Interpreters a SCRIPT job may name. A node advertises the ones it has (NodeDoc.interpreters). */
export const SCRIPT_INTERPRETERS = ["bash", "sh", "python3", "node"] as const;
export type ScriptInterpreter = (typeof SCRIPT_INTERPRETERS)[number];

export function isScriptInterpreter(name: string): name is ScriptInterpreter {
  return (SCRIPT_INTERPRETERS as readonly string[]).includes(name);
}

export const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** An uploaded artifact as a spec names it: checked at submission, verified by hash on the node before every run. */
export interface SpecArtifact {
  id: string;
  size: number;
  /** Hex SHA-256 of the bytes; the executor runs nothing whose hash differs. */
  sha256: string;
  /** Where the bytes are in the blob store. */
  blobKey: string;
}

/** SCRIPT: `<interpreter> <file>`, the file written from `source` or fetched from `artifact`. */
export interface ScriptSpec {
  interpreter: ScriptInterpreter;
  /** Inline text (at most 1 MiB), or null when the script is an artifact. */
  source: string | null;
  artifact: SpecArtifact | null;
  /** Arguments after the file. */
  args: string[];
}

/** BINARY: an uploaded executable, copied into the run's directory and run with `args`. */
export interface BinarySpec {
  artifact: SpecArtifact;
  args: string[];
}

/** HTTP: one request per attempt, made by the executor (docs/job-kinds.md). */
export interface HttpSpec {
  method: HttpMethod;
  /** http: or https: URL; the host is checked against the SSRF rules when the executor connects. */
  url: string;
  headers: Record<string, string>;
  body: string | null;
  /** Statuses that count as success, as inclusive ranges; default [[200, 299]]. */
  successStatuses: Array<[number, number]>;
}

/** What an HTTP attempt got back, recorded on the run. */
export interface HttpResponseRecord {
  status: number;
  headers: Record<string, string>;
  /** The body's first bytes (at most HTTP_RESPONSE_BODY_CAP), as UTF-8 text. */
  body: string;
  bodyTruncated: boolean;
  durationMs: number;
}

/** Bytes of an HTTP response body kept on the run. */
export const HTTP_RESPONSE_BODY_CAP = 64 * 1024;

/**
 * The ready queue a run waits in (RunDoc.pool): its pool, or `<pool>:<interpreter>` for a SCRIPT,
 * which only executors that have that interpreter take. Pool names cannot contain ':', so the
 * names never collide. Every queue of a pool is kept in the pool's own structures, with one set of
 * owner turns for all of them: the interpreter is part of each entry, and a take names the
 * interpreters its node has (docs/decisions.md, "Ready queues take turns between owners").
 */
export function readyQueueOf(spec: { pool: string; kind: string; script?: { interpreter: string } | null }): string {
  return spec.kind === "SCRIPT" && spec.script ? `${spec.pool}:${spec.script.interpreter}` : spec.pool;
}

/** The pool of a ready queue's name. */
export function poolOfQueue(queue: string): string {
  const i = queue.indexOf(":");
  return i < 0 ? queue : queue.slice(0, i);
}

/** The interpreter of a ready queue's name: "" for a pool's own queue (runs that need none). */
export function interpreterOfQueue(queue: string): string {
  const i = queue.indexOf(":");
  return i < 0 ? "" : queue.slice(i + 1);
}

/**
 * The queues an executor serving `pools` with `interpreters` takes runs of (and whose wake-ups it
 * listens to); it takes them with one take per pool (the ready queue's take names the interpreters).
 */
export function readyQueuesFor(pools: readonly string[], interpreters: readonly string[]): string[] {
  return [...pools, ...pools.flatMap((p) => interpreters.map((i) => `${p}:${i}`))];
}

/** An interpreter a node has (detected when the executor starts). */
export interface NodeInterpreter {
  name: string;
  path: string;
  /** What `--version` said, first line; null when it said nothing. */
  version: string | null;
}
