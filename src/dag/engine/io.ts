/**
 * What a DAG task instance's program is given (docs/dags.md, "Data along edges"): its DAG run's
 * params, and its parents' results (`{parentKey: result}`; a mapped parent's is the array of its
 * instances' results, in index order; a mapped instance also gets `item` (its element) and
 * `index`). Read by the executor when it starts the instance's run: the DAG run's graph and
 * params (fixed for its life, so kept in a small cache per process) and one query for the
 * parents' succeeded runs.
 */
import type { RunDoc } from "../../domain/index.js";
import { findDagRunShape, findSucceededTaskResults, type Mongo } from "../../store/index.js";
import { MAX_JSON_DEPTH, textDepth } from "./json-depth.js";

/** Largest result a task may write to KAIROS_RESULT. */
export const MAX_RESULT_BYTES = 64 * 1024;
/** Largest inputs file a task is given (a wide fan-in of large results). */
export const MAX_INPUTS_BYTES = 16 * 1024 * 1024;
/** DAG run shapes kept per process. */
const SHAPE_CACHE = 256;
/** Bytes of parents' results kept per process (a wide fan-out's children all read the same parent's). */
const RESULT_CACHE_BYTES = 16 * 1024 * 1024;

export interface TaskFiles {
  /** JSON text of the inputs object. */
  inputsJson: string;
  /** JSON text of the DAG run's params. */
  paramsJson: string;
}

type Shape = { paramsJson: string; tasks: Map<string, { dependsOn: string[]; mapOver: string | null; mapped: boolean }> };

/** A parent's succeeded result (JSON text, null when it wrote none), or none yet. */
type ParentResult = { found: true; json: string | null } | { found: false };

export class DagTaskIo {
  private readonly shapes = new Map<string, Promise<Shape | null>>();
  /**
   * Succeeded results of unmapped parents, by `<dagRunId>\n<taskKey>`: a task instance that
   * succeeded keeps its result for its DAG run's life (a retry re-runs only what did not succeed),
   * so the 1,000 children of one parent read it once per process, not 1,000 times. An entry whose
   * parent had not succeeded is dropped once answered. Bounded by RESULT_CACHE_BYTES, oldest out.
   */
  private readonly results = new Map<string, Promise<ParentResult>>();
  private readonly resultBytes = new Map<string, number>();
  private cachedBytes = 0;

  constructor(private readonly mongo: Mongo) {}

  /**
   * The succeeded results of `parents` (unmapped ones through the cache) and of every instance of
   * the `mapped` ones, as findSucceededTaskResults gives them.
   */
  private async parentResults(dagRunId: string, parents: readonly string[], mapped: ReadonlySet<string>): Promise<Array<Pick<RunDoc, "taskKey" | "mapIndex" | "resultJson">>> {
    const cached: Array<[string, Promise<ParentResult>]> = [];
    const ask: string[] = [];
    for (const p of parents) {
      const hit = mapped.has(p) ? undefined : this.results.get(`${dagRunId}\n${p}`);
      if (hit) cached.push([p, hit]);
      else ask.push(p);
    }
    let read: Promise<Array<Pick<RunDoc, "taskKey" | "mapIndex" | "resultJson">>> = Promise.resolve([]);
    if (ask.length > 0) {
      read = findSucceededTaskResults(this.mongo, dagRunId, ask);
      for (const p of ask) {
        if (mapped.has(p)) continue;
        const key = `${dagRunId}\n${p}`;
        const entry: Promise<ParentResult> = read.then((rows) => {
          const r = rows.find((x) => x.taskKey === p);
          return r ? { found: true as const, json: r.resultJson ?? null } : { found: false as const };
        });
        this.results.set(key, entry);
        entry.then(
          (r) => (r.found ? this.account(key, entry, (r.json?.length ?? 0) + key.length) : this.forget(key, entry)),
          () => this.forget(key, entry),
        );
      }
    }
    // This call's rows: the mapped parents' and the unmapped ones it asked for from its own read
    // (the cache may have dropped them meanwhile), the others from the entries it found.
    const rows = (await read).filter((r) => mapped.has(r.taskKey!) || ask.includes(r.taskKey!));
    for (const [p, entry] of cached) {
      const r = await entry;
      if (r.found) rows.push({ taskKey: p, mapIndex: null, resultJson: r.json });
    }
    return rows;
  }

  private account(key: string, entry: Promise<ParentResult>, bytes: number): void {
    if (this.results.get(key) !== entry) return;
    this.resultBytes.set(key, bytes);
    this.cachedBytes += bytes;
    for (const oldest of this.results.keys()) {
      if (this.cachedBytes <= RESULT_CACHE_BYTES) break;
      if (oldest === key) continue;
      this.forget(oldest);
    }
  }

  private forget(key: string, entry?: Promise<ParentResult>): void {
    if (entry && this.results.get(key) !== entry) return;
    this.results.delete(key);
    this.cachedBytes -= this.resultBytes.get(key) ?? 0;
    this.resultBytes.delete(key);
  }

  private shape(dagRunId: string): Promise<Shape | null> {
    let s = this.shapes.get(dagRunId);
    if (!s) {
      s = findDagRunShape(this.mongo, dagRunId).then((d) => {
        if (!d) return null;
        const mappedKeys = new Set(d.tasks.filter((t) => t.mapOver).map((t) => t.key));
        return { paramsJson: d.paramsJson, tasks: new Map(d.tasks.map((t) => [t.key, { dependsOn: t.dependsOn, mapOver: t.mapOver, mapped: mappedKeys.has(t.key) }])) };
      });
      if (this.shapes.size >= SHAPE_CACHE) this.shapes.delete(this.shapes.keys().next().value!);
      this.shapes.set(dagRunId, s);
      s.catch(() => this.shapes.delete(dagRunId));
    }
    return s;
  }

  /** The files of a DAG task run; throws (with a message for the user) when they cannot be made. */
  async filesFor(run: Pick<RunDoc, "dagRunId" | "taskKey" | "mapIndex">): Promise<TaskFiles> {
    const shape = run.dagRunId ? await this.shape(run.dagRunId) : null;
    if (!shape) throw new Error(`DAG run ${run.dagRunId} not found (deleted?)`);
    const def = shape.tasks.get(run.taskKey ?? "");
    if (!def) throw new Error(`task ${run.taskKey} is not in DAG run ${run.dagRunId}`);
    const inputs: Record<string, unknown> = {};
    for (const parent of def.dependsOn) inputs[parent] = shape.tasks.get(parent)?.mapped ? [] : null;
    if (def.dependsOn.length > 0) {
      const mapped = new Set(def.dependsOn.filter((p) => shape.tasks.get(p)?.mapped));
      const results = await this.parentResults(run.dagRunId!, def.dependsOn, mapped);
      // Refused on the texts' sizes, before parsing them: a join of 1,000 parents of 64 KiB each is
      // 64 MB of text, several times that parsed, and again as one string, in the executor's heap.
      const bytes = results.reduce((n, r) => n + (r.resultJson == null ? 0 : Buffer.byteLength(r.resultJson)), 0);
      if (bytes > MAX_INPUTS_BYTES) throw inputsTooLarge(bytes);
      for (const r of results) {
        const value = r.resultJson == null ? null : (JSON.parse(r.resultJson) as unknown);
        const list = inputs[r.taskKey!];
        if (Array.isArray(list) && r.mapIndex != null) list[r.mapIndex] = value;
        else inputs[r.taskKey!] = value;
      }
      // A mapped parent's array has one entry per instance (null where one wrote nothing).
      for (const parent of def.dependsOn) {
        const list = inputs[parent];
        if (Array.isArray(list)) for (let i = 0; i < list.length; i++) list[i] ??= null;
      }
    }
    if (def.mapOver && run.mapIndex != null) {
      const source = inputs[def.mapOver];
      inputs.item = Array.isArray(source) ? (source[run.mapIndex] ?? null) : null;
      inputs.index = run.mapIndex;
    }
    const inputsJson = JSON.stringify(inputs);
    const size = Buffer.byteLength(inputsJson);
    if (size > MAX_INPUTS_BYTES) throw inputsTooLarge(size);
    return { inputsJson, paramsJson: shape.paramsJson };
  }
}

function inputsTooLarge(bytes: number): Error {
  return new Error(`the parents' results come to ${bytes} bytes of KAIROS_INPUTS; at most ${MAX_INPUTS_BYTES} (16 MiB): write smaller results, or join fewer parents`);
}

/**
 * A result file's text, checked: at most MAX_RESULT_BYTES, valid JSON. Returns the JSON text to
 * store (re-serialised, so what is stored is exactly one JSON value) or the error to fail with.
 */
export function checkResult(text: string | null, bytes: number): { json: string | null } | { error: string } {
  if (text === null) return { json: null };
  if (bytes > MAX_RESULT_BYTES) return { error: `RESULT_TOO_LARGE: the task wrote ${bytes} bytes to KAIROS_RESULT; at most ${MAX_RESULT_BYTES} bytes (64 KiB) of JSON are kept` };
  if (text.trim() === "") return { json: null };
  const depth = textDepth(text);
  if (depth > MAX_JSON_DEPTH) {
    return { error: `RESULT_TOO_DEEP: KAIROS_RESULT nests objects and arrays ${depth} levels deep; at most ${MAX_JSON_DEPTH}` };
  }
  try {
    return { json: JSON.stringify(JSON.parse(text)) };
  } catch (e) {
    return { error: `RESULT_NOT_JSON: KAIROS_RESULT must hold one JSON value (${(e as Error).message})` };
  }
}
