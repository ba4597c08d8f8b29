/**
 * Resources a run may use: the defaults, the bounds, how a request is read and checked. One place
 * for these rules; the executor enforces them (executor/sandbox), submission checks them here.
 *
 * Per pool: each executor publishes the defaults and the maximum it applies to the runs of its
 * pools (KAIROS_RUN_DEFAULTS, KAIROS_RUN_MAX) in its node document. A job that leaves a resource
 * out gets the pool's default; a job asking for more than any online node of its pool allows is
 * refused at submission, since no node would ever take it.
 */
import { ConfigError, readDecimal, ValidationError } from "../domain/index.js";
import type { NetworkAccess, NodeDoc, ResourceRequest } from "../domain/index.js";

export const RESOURCE_KEYS = ["cpu", "memoryMb", "pids", "diskMb"] as const;
export type ResourceKey = (typeof RESOURCE_KEYS)[number];

/** Built-in defaults: what a run gets when neither the job nor its pool's nodes say otherwise. */
export const DEFAULT_RESOURCES: Readonly<ResourceRequest> = Object.freeze({ cpu: 1, memoryMb: 512, pids: 256, diskMb: 1024 });

/** What any request must stay within, whatever the nodes allow. */
export const RESOURCE_BOUNDS: Readonly<Record<ResourceKey, { min: number; max: number; integer: boolean; unit: string }>> = Object.freeze({
  cpu: { min: 0.01, max: 1024, integer: false, unit: "cores" },
  memoryMb: { min: 16, max: 4_194_304, integer: true, unit: "MiB" },
  pids: { min: 8, max: 4_194_304, integer: true, unit: "processes" },
  diskMb: { min: 1, max: 16_777_216, integer: true, unit: "MiB" },
});

export const NETWORK_ACCESS: readonly NetworkAccess[] = ["NONE", "EGRESS"];

/** A stored spec's resources (specs stored before resources existed get the built-in defaults). */
export function resourcesOf(spec: { resources?: ResourceRequest }): ResourceRequest {
  return spec.resources ?? DEFAULT_RESOURCES;
}

export function fitsWithin(req: ResourceRequest, max: ResourceRequest): boolean {
  return RESOURCE_KEYS.every((k) => req[k] <= max[k]);
}

function checkValue(key: ResourceKey, value: unknown, field: string): number {
  const b = RESOURCE_BOUNDS[key];
  if (typeof value !== "number" || !Number.isFinite(value) || (b.integer && !Number.isInteger(value))) {
    throw new ValidationError(field, `must be ${b.integer ? "a whole number" : "a number"} of ${b.unit} from ${b.min} to ${b.max}`);
  }
  if (value < b.min || value > b.max) throw new ValidationError(field, `${value} is out of range: ${b.min}–${b.max} ${b.unit}`);
  return value;
}

export interface ResourcesInput {
  cpu?: number | null;
  memoryMb?: number | null;
  pids?: number | null;
  diskMb?: number | null;
}

/**
 * A job's request with the pool's defaults filled in, checked against the bounds and against the
 * largest run the pool's online nodes accept (`nodes` empty: no node serves the pool yet, so only
 * the bounds apply).
 */
export function resolveResources(
  input: ResourcesInput | null | undefined,
  network: NetworkAccess,
  pool: string,
  nodes: ReadonlyArray<Pick<NodeDoc, "name" | "maxRun" | "defaultRun" | "isolation">>,
): ResourceRequest {
  const defaults = nodes.find((n) => n.defaultRun)?.defaultRun ?? DEFAULT_RESOURCES;
  const req = {} as ResourceRequest;
  for (const k of RESOURCE_KEYS) req[k] = checkValue(k, input?.[k] ?? defaults[k], `spec.resources.${k}`);
  if (nodes.length === 0) return req;
  const fitting = nodes.filter((n) => !n.maxRun || fitsWithin(req, n.maxRun));
  if (fitting.length === 0) {
    const largest = nodes.map((n) => `${n.name}: ${describe(n.maxRun!)}`).join("; ");
    throw new ValidationError("spec.resources", `no node of pool "${pool}" takes a run of ${describe(req)}; the most a node allows is ${largest}`);
  }
  if (network !== "NONE" && !fitting.some((n) => (n.isolation?.network ?? ["NONE"]).includes(network))) {
    const why = [...new Set(fitting.flatMap((n) => n.isolation?.notes ?? []))].join("; ");
    throw new ValidationError("spec.network", `no node of pool "${pool}" can give a run ${network} network access${why ? ` (${why})` : ""}; allowed here: NONE`);
  }
  return req;
}

export function describe(r: ResourceRequest): string {
  return `cpu ${r.cpu}, memoryMb ${r.memoryMb}, pids ${r.pids}, diskMb ${r.diskMb}`;
}

/**
 * Reads a setting like `cpu=2,memoryMb=4096,pids=512,diskMb=10240` over `base` (keys left out
 * keep the base value).
 */
export function parseResourceSetting(name: string, raw: string | undefined, base: ResourceRequest): ResourceRequest {
  const out = { ...base };
  if (raw === undefined || raw.trim() === "") return out;
  for (const part of raw.split(",")) {
    const [k, v] = part.split("=").map((s) => s.trim());
    if (!k || !(RESOURCE_KEYS as readonly string[]).includes(k) || v === undefined) {
      throw new ConfigError(`${name}: "${part}" is not key=value with key one of ${RESOURCE_KEYS.join(", ")} (e.g. cpu=2,memoryMb=4096)`);
    }
    // Decimal only (domain's readDecimal, as every number setting): Number() took 1e3 and 0x2.
    const read = readDecimal(v, RESOURCE_BOUNDS[k as ResourceKey].integer);
    try {
      out[k as ResourceKey] = checkValue(k as ResourceKey, "value" in read ? read.value : NaN, k);
    } catch (e) {
      throw new ConfigError(`${name}: ${(e as Error).message}${"problem" in read ? ` (got "${v}": it ${read.problem})` : ""}`);
    }
  }
  return out;
}
