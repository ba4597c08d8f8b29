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

export interface TaskFiles {
  /** JSON text of the inputs object. */
  inputsJson: string;
  /** JSON text of the DAG run's params. */
  paramsJson: string;
}

type Shape = { paramsJson: string; tasks: Map<string, { dependsOn: string[]; mapOver: string | null; mapped: boolean }> };

export class DagTaskIo {
  private readonly shapes = new Map<string, Promise<Shape | null>>();

  constructor(private readonly mongo: Mongo) {}

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
      const results = await findSucceededTaskResults(this.mongo, run.dagRunId!, def.dependsOn);
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
