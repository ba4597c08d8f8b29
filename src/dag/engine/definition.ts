/**
 * A DAG as submitted, checked: the graph by the pure validator (src/dag/plan/validate.ts), each
 * task's spec by the very code that checks a job's spec (core/spec.ts), with its messages prefixed
 * by the task's key, and the DAG's own fields like a job's.
 */
import { validateCatchup, validateDescription, validateName, validatePriority, validateSpec, wrapSchedule, type JobSpecInput, type PoolNode, type Submit as JobSubmit } from "../../core/index.js";
import type { DagTaskDoc, JobSpec, MisfirePolicy, OverlapPolicy, Schedule, SpecArtifact, TriggerRule } from "../../domain/index.js";
import { ValidationError } from "../../domain/index.js";
import { normalizeRetry, normalizeSchedule, type RetryInput, type ScheduleInput } from "../../timing/index.js";
import { MAX_MAP_INSTANCES } from "../plan/mapped.js";
import type { DagDef } from "../plan/types.js";
import { validateDag } from "../plan/validate.js";
import { MAX_JSON_DEPTH, valueDepth } from "./json-depth.js";

export interface DagTaskInput {
  key: string;
  spec: JobSpecInput;
  dependsOn?: string[] | null;
  trigger?: TriggerRule | null;
  retry?: RetryInput | null;
  priority?: number | null;
  mapOver?: string | null;
}

/** Options of a request that creates something (createDag, triggerDag, backfillDag): as a job's (core's Submit). */
export type Submit = Pick<JobSubmit, "idempotencyKey" | "admit">;

export interface DagInput {
  name: string;
  description?: string | null;
  tasks: DagTaskInput[];
  schedule?: ScheduleInput | null;
  misfire?: MisfirePolicy | null;
  overlap?: OverlapPolicy | null;
  catchupWindow?: string | null;
  maxParallel?: number | null;
  failFast?: boolean | null;
  /** Default params: a JSON object. */
  params?: Record<string, unknown> | null;
  paused?: boolean | null;
}

/**
 * A change to a DAG: only the fields given. `schedule: null` means unchanged (as updateJob's);
 * `clearSchedule: true` removes the schedule (not together with a new `schedule`).
 */
export type DagPatch = Partial<DagInput> & { clearSchedule?: boolean | null };

/** Largest params object (as JSON text), defaults or a trigger's. */
export const MAX_PARAMS_BYTES = 64 * 1024;

/** The most task instances `maxParallel` may allow at once in one DAG run. */
export const MAX_PARALLEL = 10_000;
/** Most problems of a graph listed in one error. */
const MAX_LISTED_PROBLEMS = 20;

/** The graph as the pure planner sees it. */
export function planOf(tasks: readonly Pick<DagTaskDoc, "key" | "dependsOn" | "trigger" | "mapOver" | "priority">[]): DagDef {
  return {
    tasks: tasks.map((t) => ({
      key: t.key,
      dependsOn: t.dependsOn,
      trigger: t.trigger,
      priority: t.priority,
      ...(t.mapOver != null ? { mapOver: t.mapOver } : {}),
    })),
  };
}

/** Most bytes of a mapped task's spec: each of its instances (up to MAX_MAP_INSTANCES) is a run holding a copy. */
export const MAX_MAPPED_SPEC_BYTES = 64 * 1024;

/**
 * A mapped task's spec, refused past MAX_MAPPED_SPEC_BYTES: the 2 MiB request limit bounds one
 * copy, but a task mapped over 1,000 elements stores 1,000 (a 1 MiB inline script would be 1 GB
 * of run documents from one trigger).
 */
function mappedSpec(spec: JobSpec): JobSpec {
  const bytes = Buffer.byteLength(JSON.stringify(spec));
  if (bytes > MAX_MAPPED_SPEC_BYTES) {
    throw new ValidationError(
      "spec",
      `is ${bytes} bytes; a task with mapOver runs as up to ${MAX_MAP_INSTANCES} instances, each a run holding a copy of its spec, so at most ${MAX_MAPPED_SPEC_BYTES} bytes (64 KiB): upload a large script as an artifact and give its artifactId`,
    );
  }
  return spec;
}

/** Checks the task list (graph, then each task) and returns it as stored. */
export async function checkTasks(
  tasks: readonly DagTaskInput[] | null | undefined,
  poolNodes: (pool: string | null | undefined) => Promise<PoolNode[]>,
  /** The uploaded script or binary a task's spec names, resolved as a job's is (the caller's artifacts only). */
  artifactOf: (spec: JobSpecInput) => Promise<SpecArtifact | null> = async () => null,
): Promise<DagTaskDoc[]> {
  if (!Array.isArray(tasks)) throw new ValidationError("tasks", "a DAG needs at least one task");
  const graph: DagDef = {
    tasks: tasks.map((t) => ({
      key: t.key,
      dependsOn: t.dependsOn ?? [],
      trigger: t.trigger ?? "ALL_SUCCESS",
      priority: t.priority ?? 5,
      ...(t.mapOver != null ? { mapOver: t.mapOver } : {}),
    })),
  };
  const problems = validateDag(graph);
  if (problems.length === 1) throw new ValidationError(problems[0]!.path, problems[0]!.message);
  if (problems.length > 1) {
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS).map((p) => `${p.path}: ${p.message}`);
    if (problems.length > MAX_LISTED_PROBLEMS) listed.push(`and ${problems.length - MAX_LISTED_PROBLEMS} more`);
    throw new ValidationError("tasks", `${problems.length} problems: ${listed.join("; ")}`);
  }
  const nodesByPool = new Map<string, Promise<PoolNode[]>>();
  const out: DagTaskDoc[] = [];
  for (const [i, t] of tasks.entries()) {
    const pool = t.spec?.pool ?? "default";
    if (!nodesByPool.has(pool)) nodesByPool.set(pool, poolNodes(pool));
    const nodes = await nodesByPool.get(pool)!;
    const artifact = await prefixedAsync(t.key, i, () => artifactOf(t.spec));
    out.push(
      prefixed(t.key, i, () => ({
        key: t.key,
        spec: t.mapOver != null ? mappedSpec(validateSpec(t.spec, nodes, artifact)) : validateSpec(t.spec, nodes, artifact),
        dependsOn: [...(t.dependsOn ?? [])],
        trigger: t.trigger ?? "ALL_SUCCESS",
        retry: wrapSchedule(() => normalizeRetry(t.retry ?? undefined), null),
        priority: validatePriority(t.priority),
        mapOver: t.mapOver ?? null,
      })),
    );
  }
  return out;
}

/**
 * A task's spec, retry or priority refused: `extensions.field` is the input path
 * (`tasks[1].spec.env`), the message names the task by its key (`task "load": spec.env: …`).
 */
class TaskFieldError extends ValidationError {
  constructor(field: string, message: string) {
    super(field, message);
    this.message = message;
  }
}

/** Runs `fn`; a validation error it throws is reported as the task's (see {@link TaskFieldError}). */
function prefixed<T>(key: string, index: number, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw asTaskError(key, index, e);
  }
}

/** {@link prefixed} for an asynchronous check (an artifact lookup). */
async function prefixedAsync<T>(key: string, index: number, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw asTaskError(key, index, e);
  }
}

function asTaskError(key: string, index: number, e: unknown): unknown {
  return e instanceof ValidationError ? new TaskFieldError(`tasks[${index}].${e.field}`, `task ${JSON.stringify(key)}: ${e.message}`) : e;
}

/** Params (defaults or a trigger's) as stored: JSON text of an object, at most MAX_PARAMS_BYTES. */
export function paramsText(params: Record<string, unknown> | null | undefined, field = "params"): string {
  if (params == null) return "{}";
  if (typeof params !== "object" || Array.isArray(params)) throw new ValidationError(field, "must be a JSON object");
  const depth = valueDepth(params);
  if (depth > MAX_JSON_DEPTH) throw new ValidationError(field, `nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep; at most ${MAX_JSON_DEPTH}`);
  const text = JSON.stringify(params);
  if (Buffer.byteLength(text) > MAX_PARAMS_BYTES) throw new ValidationError(field, `at most ${MAX_PARAMS_BYTES} bytes of JSON`);
  return text;
}

/** A trigger's params merged over the DAG's defaults (top-level keys), as JSON text. */
export function mergeParams(defaultsJson: string, given: Record<string, unknown> | null | undefined): string {
  if (given == null) return defaultsJson;
  const merged = { ...(JSON.parse(defaultsJson) as Record<string, unknown>), ...(JSON.parse(paramsText(given)) as Record<string, unknown>) };
  return paramsText(merged);
}

export function checkMaxParallel(n: number | null | undefined): number | null {
  if (n == null) return null;
  if (!Number.isInteger(n) || n < 1 || n > MAX_PARALLEL) throw new ValidationError("maxParallel", `must be a whole number from 1 to ${MAX_PARALLEL} (got ${n})`);
  return n;
}

export function checkSchedule(s: ScheduleInput | null | undefined, now: number): Schedule | null {
  return s == null ? null : wrapSchedule(() => normalizeSchedule(s, now));
}

export { validateCatchup, validateDescription, validateName };
