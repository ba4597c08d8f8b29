/**
 * What a job runs, as submitted and as stored: checking a spec and filling in its defaults (the
 * pool's resource defaults included). Pure: the caller supplies the pool's online nodes.
 */
import { unpairedSurrogateProblem, ValidationError } from "../domain/index.js";
import { normalizeTimeout, ScheduleError } from "../timing/index.js";
import { SpecKind } from "../domain/index.js";
import type { SpecArtifact, JobSpec, NetworkAccess, NodeDoc } from "../domain/index.js";
import { HTTP_DEFAULT_TIMEOUT_MS, HTTP_RESOURCES, refuseForeignFields, validateBinary, validateHttp, validateScript, type HttpInput } from "./job-kinds.js";
import { NETWORK_ACCESS, resolveResources, type ResourcesInput } from "./resources.js";

export interface JobSpecInput {
  kind: SpecKind;
  command?: string | null;
  argv?: string[] | null;
  /** SCRIPT: bash, sh, python3 or node. */
  interpreter?: string | null;
  /** SCRIPT: the script's text (or artifactId). */
  source?: string | null;
  /** SCRIPT or BINARY: an uploaded artifact of the submitter. */
  artifactId?: string | null;
  /** SCRIPT or BINARY: arguments after the file. */
  args?: string[] | null;
  http?: HttpInput | null;
  env?: Record<string, string> | null;
  timeout?: string | null;
  pool?: string | null;
  resources?: ResourcesInput | null;
  network?: NetworkAccess | null;
}

const POOL_RE = /^[A-Za-z0-9_.-]{1,64}$/;
const ENV_KEY_RE = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** Turns a timing error into a ValidationError on the input path; `prefix: null` when its field is the full path already. */
export function wrapSchedule<T>(fn: () => T, prefix: string | null = "schedule"): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ScheduleError) throw new ValidationError(prefix === null ? e.field : `${prefix}.${e.field}`, e.detail);
    throw e;
  }
}

/** A pool's name: 1–64 letters, digits, '_', '.', '-' (BAD_USER_INPUT on `field` otherwise). */
export function checkPoolName(field: string, pool: string): string {
  if (!POOL_RE.test(pool)) throw new ValidationError(field, "1–64 characters of letters, digits, '_', '.', '-'");
  return pool;
}

export type PoolNode = Pick<NodeDoc, "name" | "maxRun" | "defaultRun" | "isolation" | "interpreters">;

/** A NUL byte cannot pass through exec (C strings end there): refused here rather than failing every run. */
function refuseNul(field: string, value: string): void {
  if (value.includes("\u0000")) throw new ValidationError(field, "must not contain a NUL byte (\\u0000)");
  // Stored, an unpaired surrogate becomes U+FFFD: the program would run with other text than given.
  const unpaired = unpairedSurrogateProblem(value);
  if (unpaired) throw new ValidationError(field, unpaired);
}

/** Variables that would change how every program of the run is loaded or linked. */
const FORBIDDEN_ENV = new Set(["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT"]);

/**
 * Checks a job's spec and fills in its defaults. `poolNodes`: the online nodes of its pool, whose
 * run defaults and maximums apply (none online: the built-in defaults and bounds only).
 */
export function validateSpec(spec: JobSpecInput, poolNodes: readonly PoolNode[] = [], artifact: SpecArtifact | null = null): JobSpec {
  const kinds = Object.values(SpecKind) as string[];
  if (!kinds.includes(spec.kind)) throw new ValidationError("spec.kind", `"${spec.kind}" is not a job kind; allowed: ${kinds.join(", ")}`);
  refuseForeignFields(spec.kind, spec as unknown as Record<string, unknown>);
  if (spec.kind === "COMMAND") return commandSpec(spec, poolNodes);
  const common = commonFields(spec, poolNodes);
  switch (spec.kind) {
    case "SCRIPT": {
      const script = validateScript(spec, artifact);
      return { kind: "SCRIPT", command: null, argv: null, script, artifactId: script.artifact?.id ?? null, ...common };
    }
    case "BINARY": {
      const binary = validateBinary(spec, artifact);
      return { kind: "BINARY", command: null, argv: null, binary, artifactId: binary.artifact.id, ...common };
    }
    case "HTTP": {
      // No process: no environment, no sandbox network, no resources of the node's beyond a slot.
      if (spec.env != null && Object.keys(spec.env).length > 0) throw new ValidationError("spec.env", "HTTP jobs run no program, so they take no environment; send values in http.headers or http.body");
      if (spec.resources != null) throw new ValidationError("spec.resources", "HTTP jobs run no program on the node; leave resources out");
      if (spec.network != null && spec.network !== "NONE") throw new ValidationError("spec.network", "HTTP requests are made by the executor under its SSRF rules; network applies to programs only, leave it out");
      const http = validateHttp(spec);
      // A request left without a timeout gets 30 s, not a program's hour.
      const timeoutMs = spec.timeout == null ? HTTP_DEFAULT_TIMEOUT_MS : common.timeoutMs;
      return { kind: "HTTP", command: null, argv: null, http, ...common, timeoutMs, env: {}, resources: { ...HTTP_RESOURCES }, network: "NONE" };
    }
    default:
      throw new ValidationError("spec.kind", `"${spec.kind}" is not a job kind; allowed: ${kinds.join(", ")}`);
  }
}

/** Most bytes of a spec's environment (`NAME=value` strings, with their terminators). */
export const MAX_ENV_BYTES = 64 * 1024;
/** Most bytes of an argv (its strings, with their terminators). */
export const MAX_ARGV_BYTES = 64 * 1024;

/** The fields every kind has: environment, timeout, pool, resources, network. */
function commonFields(spec: JobSpecInput, poolNodes: readonly PoolNode[]): Pick<JobSpec, "env" | "timeoutMs" | "pool" | "resources" | "network"> {
  const full = commandSpec({ ...spec, kind: "COMMAND", command: null, argv: ["-"], interpreter: null, source: null, artifactId: null, args: null, http: null }, poolNodes);
  return { env: full.env, timeoutMs: full.timeoutMs, pool: full.pool, resources: full.resources, network: full.network };
}

function commandSpec(spec: JobSpecInput, poolNodes: readonly PoolNode[]): JobSpec {
  const hasCommand = spec.command != null;
  const hasArgv = spec.argv != null;
  if (hasCommand === hasArgv) {
    throw new ValidationError("spec", "give exactly one of command (run by /bin/sh -c) or argv (executed directly)");
  }
  if (hasCommand && spec.command!.trim() === "") throw new ValidationError("spec.command", "must not be empty");
  if (hasCommand && spec.command!.length > 65_536) throw new ValidationError("spec.command", "at most 64 KiB");
  if (hasCommand) refuseNul("spec.command", spec.command!);
  if (hasArgv) {
    if (spec.argv!.length === 0 || spec.argv![0]!.trim() === "") {
      throw new ValidationError("spec.argv", "must name the program to run as its first element");
    }
    if (spec.argv!.length > 1_024) throw new ValidationError("spec.argv", "at most 1024 arguments");
    spec.argv!.forEach((a, i) => refuseNul(`spec.argv[${i}]`, a));
    const bytes = spec.argv!.reduce((n, a) => n + Buffer.byteLength(a) + 1, 0);
    if (bytes > MAX_ARGV_BYTES) throw new ValidationError("spec.argv", `the arguments come to ${bytes} bytes; at most ${MAX_ARGV_BYTES} (64 KiB) in all`);
  }
  const env = spec.env ?? {};
  const keys = Object.keys(env);
  if (keys.length > 128) throw new ValidationError("spec.env", "at most 128 variables");
  for (const k of keys) {
    if (!ENV_KEY_RE.test(k)) throw new ValidationError("spec.env", `"${k}" is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)`);
    if (k.startsWith("KAIROS_")) throw new ValidationError("spec.env", `"${k}": names starting with KAIROS_ are reserved`);
    if (FORBIDDEN_ENV.has(k)) throw new ValidationError("spec.env", `"${k}" may not be set (it changes how every program of the run is loaded)`);
    if (typeof env[k] !== "string") throw new ValidationError("spec.env", `value of "${k}" must be a string`);
    refuseNul(`spec.env.${k}`, env[k]);
  }
  // Each variable is a NAME=value string the kernel copies into every process the run starts
  // (execve refuses one over 128 KiB, and all of them with the arguments over its limit): refused
  // here with its size rather than failing every run at its start; and the spec is copied into
  // every run document.
  const envBytes = keys.reduce((n, k) => n + Buffer.byteLength(k) + Buffer.byteLength(env[k]!) + 2, 0);
  if (envBytes > MAX_ENV_BYTES) throw new ValidationError("spec.env", `the variables come to ${envBytes} bytes; at most ${MAX_ENV_BYTES} (64 KiB) in all: pass larger data as a file (a script, an artifact)`);
  const pool = spec.pool ?? "default";
  checkPoolName("spec.pool", pool);
  const network = spec.network ?? "NONE";
  if (!NETWORK_ACCESS.includes(network)) throw new ValidationError("spec.network", `"${network}" is not one of ${NETWORK_ACCESS.join(", ")}`);
  return {
    kind: "COMMAND",
    command: hasCommand ? spec.command! : null,
    argv: hasArgv ? [...spec.argv!] : null,
    env: { ...env },
    timeoutMs: wrapSchedule(() => normalizeTimeout(spec.timeout ?? undefined), "spec"),
    pool,
    resources: resolveResources(spec.resources, network, pool, poolNodes),
    network,
  };
}
