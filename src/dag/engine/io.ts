/**
 * What a DAG task instance's program is given (docs/dags.md, "Data along edges"): its DAG run's
 * params, and its parents' results (`{parentKey: result}`; a mapped parent's is the array of its
 * instances' results; a mapped instance also gets `item` (its element) and `index`). Read by the
 * executor when it starts the instance's run.
 */
import type { RunDoc } from "../../domain/index.js";
import { findDagRun, findTaskResults, type Mongo } from "../../store/index.js";
import { instanceFireKey } from "./keys.js";

/** Largest result a task may write to KAIROS_RESULT. */
export const MAX_RESULT_BYTES = 64 * 1024;
/** Largest inputs file a task is given (a wide fan-in of large results). */
export const MAX_INPUTS_BYTES = 16 * 1024 * 1024;

export interface TaskFiles {
  /** JSON text of the inputs object. */
  inputsJson: string;
  /** JSON text of the DAG run's params. */
  paramsJson: string;
}

export class DagTaskIo {
  constructor(private readonly mongo: Mongo) {}

  /** The files of a DAG task run; throws (with a message for the user) when they cannot be made. */
  async filesFor(run: Pick<RunDoc, "dagRunId" | "taskKey" | "mapIndex">): Promise<TaskFiles> {
    const doc = run.dagRunId ? await findDagRun(this.mongo, run.dagRunId) : null;
    if (!doc) throw new Error(`DAG run ${run.dagRunId} not found (deleted?)`);
    const def = doc.definition.tasks.find((t) => t.key === run.taskKey);
    if (!def) throw new Error(`task ${run.taskKey} is not in DAG run ${doc._id}`);
    const keysOf = new Map<string, string[]>();
    for (const parent of def.dependsOn) {
      const v = doc.tasks[parent];
      if (!v) continue;
      keysOf.set(
        parent,
        v.instances === undefined ? [instanceFireKey(doc._id, parent, null, v.attempt)] : v.instances.map((i, index) => instanceFireKey(doc._id, parent, index, i.attempt)),
      );
    }
    const results = await findTaskResults(this.mongo, [...keysOf.values()].flat());
    const parse = (fk: string): unknown => {
      const text = results.get(fk);
      return text == null ? null : (JSON.parse(text) as unknown);
    };
    const inputs: Record<string, unknown> = {};
    for (const [parent, fks] of keysOf) inputs[parent] = doc.tasks[parent]!.instances === undefined ? parse(fks[0]!) : fks.map(parse);
    if (def.mapOver && run.mapIndex != null) {
      const source = inputs[def.mapOver];
      inputs.item = Array.isArray(source) ? (source[run.mapIndex] ?? null) : null;
      inputs.index = run.mapIndex;
    }
    const inputsJson = JSON.stringify(inputs);
    if (Buffer.byteLength(inputsJson) > MAX_INPUTS_BYTES) {
      throw new Error(`the parents' results come to more than ${MAX_INPUTS_BYTES} bytes of KAIROS_INPUTS; write smaller results`);
    }
    return { inputsJson, paramsJson: doc.paramsJson };
  }
}

/**
 * A result file's text, checked: at most MAX_RESULT_BYTES, valid JSON. Returns the JSON text to
 * store (re-serialised, so what is stored is exactly one JSON value) or the error to fail with.
 */
export function checkResult(text: string | null, bytes: number): { json: string | null } | { error: string } {
  if (text === null) return { json: null };
  if (bytes > MAX_RESULT_BYTES) return { error: `RESULT_TOO_LARGE: the task wrote ${bytes} bytes to KAIROS_RESULT; at most ${MAX_RESULT_BYTES} bytes (64 KiB) of JSON are kept` };
  if (text.trim() === "") return { json: null };
  try {
    return { json: JSON.stringify(JSON.parse(text)) };
  } catch (e) {
    return { error: `RESULT_NOT_JSON: KAIROS_RESULT must hold one JSON value (${(e as Error).message})` };
  }
}
