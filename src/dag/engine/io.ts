/**
 * What a DAG task instance's program is given (docs/dags.md, "Data along edges"): its DAG run's
 * params, and its parents' results (`{parentKey: result}`; a mapped parent's is the array of its
 * instances' results, in index order; a mapped instance also gets `item` (its element) and
 * `index`). Read by the executor when it starts the instance's run: the DAG run's graph and
 * params (fixed for its life, so kept in a small cache per process) and one query for the
 * parents' succeeded runs.
 */
import type { RunDoc } from "../../domain/index.js";
import { dagAttemptOfFireKey, TriggerRule } from "../../domain/index.js";
import { findDagRunShape, findInstanceCounts, findSucceededTaskResults, type Mongo } from "../../store/index.js";
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

type Shape = { paramsJson: string; tasks: Map<string, { dependsOn: string[]; mapOver: string | null; mapped: boolean; trigger: TriggerRule }> };

/**
 * Trigger rules under which a task starts only once every parent has ended (readiness.ts gives
 * RUN for them only then): what such a task reads of a mapped parent is that parent's final set of
 * results for the task's attempt. ONE_SUCCESS and ONE_FAILED may start it while a parent runs.
 */
const AFTER_ALL_PARENTS: ReadonlySet<TriggerRule> = new Set([TriggerRule.ALL_SUCCESS, TriggerRule.ALL_DONE, TriggerRule.ALL_FAILED, TriggerRule.NONE_FAILED]);

/**
 * A parent's succeeded result (JSON text, null when it wrote none), or none yet. `starts`: where
 * each element of the result begins, when it is an array and a mapped child asked for one.
 */
type ParentResult = { found: true; json: string | null; owner: CacheSlot; starts?: Uint32Array | null } | { found: false };
type CacheSlot = { key: string; entry: Promise<ParentResult> };
/** A mapped parent as its children read it: its instances' succeeded runs, and how many instances it has. */
type MappedParent = { rows: ParentRow[]; size: number };

/** A parent's succeeded run, as filesFor reads it (`cached`: its entry, for an unmapped parent's). */
export type ParentRow = Pick<RunDoc, "taskKey" | "mapIndex" | "resultJson"> & { cached?: ParentResult & { found: true } };

/** What filesFor needs of the task whose inputs it makes. */
export interface InputsTask {
  dependsOn: readonly string[];
  /** Its parents that are mapped (their result is the array of their instances'). */
  mapped: ReadonlySet<string>;
  /** A mapped parent's number of instances: its array has that many entries (null for one with no result), at least. */
  sizes?: ReadonlyMap<string, number>;
  mapOver: string | null | undefined;
}

export class DagTaskIo {
  private readonly shapes = new Map<string, Promise<Shape | null>>();
  /**
   * Succeeded results of unmapped parents, by `<dagRunId>\n<taskKey>`: a task instance that
   * succeeded keeps its result for its DAG run's life (a retry re-runs only what did not succeed),
   * so the 1,000 children of one parent read it once per process, not 1,000 times. An entry whose
   * parent had not succeeded is dropped once answered. Bounded by RESULT_CACHE_BYTES, oldest out.
   */
  private readonly results = new Map<string, Promise<ParentResult>>();
  /**
   * Succeeded instance results of mapped parents, by `<dagRunId>\n<taskKey>\n@<attempt>`: the
   * rows a task that starts after all its parents ended read at its DAG attempt (see
   * AFTER_ALL_PARENTS). Those rows do not change while that attempt runs: every instance of the
   * parent has ended, a succeeded one's result is kept, and only retryDagRun (after the DAG run
   * ended, giving every task it re-runs a new attempt) lets a failed one succeed. So a mapped
   * child of a mapped parent reads the parent's 1,000 results once per process, not once per
   * instance. Counted in the same bytes as `results`.
   */
  private readonly mappedRows = new Map<string, Promise<MappedParent>>();
  private readonly resultBytes = new Map<string, number>();
  private cachedBytes = 0;

  constructor(private readonly mongo: Mongo) {}

  /**
   * The succeeded results of `parents` (unmapped ones through the cache) and of every instance of
   * the `mapped` ones, as findSucceededTaskResults gives them.
   */
  private async parentResults(
    dagRunId: string,
    parents: readonly string[],
    mapped: ReadonlySet<string>,
    mappedKey: ((parent: string) => string) | null,
  ): Promise<{ rows: ParentRow[]; sizes: Map<string, number> }> {
    const cached: Array<[string, Promise<ParentResult>]> = [];
    const cachedRows: Array<[string, Promise<MappedParent>]> = [];
    const ask: string[] = [];
    for (const p of parents) {
      if (mapped.has(p)) {
        const hit = mappedKey ? this.mappedRows.get(mappedKey(p)) : undefined;
        if (hit) cachedRows.push([p, hit]);
        else ask.push(p);
        continue;
      }
      const hit = this.results.get(`${dagRunId}\n${p}`);
      if (hit) cached.push([p, hit]);
      else ask.push(p);
    }
    let read: Promise<Array<Pick<RunDoc, "taskKey" | "mapIndex" | "resultJson">>> = Promise.resolve([]);
    const askMapped = ask.filter((p) => mapped.has(p));
    const counts = askMapped.length > 0 ? findInstanceCounts(this.mongo, dagRunId, askMapped) : Promise.resolve(new Map<string, number>());
    counts.catch(() => undefined); // awaited below
    if (ask.length > 0) {
      read = findSucceededTaskResults(this.mongo, dagRunId, ask);
      for (const p of ask) {
        if (mapped.has(p)) {
          if (mappedKey) this.keepRows(mappedKey(p), Promise.all([read, counts]).then(([rows, n]) => ({ rows: rows.filter((r) => r.taskKey === p), size: n.get(p) ?? 0 })));
          continue;
        }
        const key = `${dagRunId}\n${p}`;
        const entry: Promise<ParentResult> = read.then((rows) => {
          const r = rows.find((x) => x.taskKey === p);
          return r ? { found: true as const, json: r.resultJson ?? null, owner: { key, entry } } : { found: false as const };
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
    const rows: ParentRow[] = (await read).filter((r) => mapped.has(r.taskKey!) || ask.includes(r.taskKey!));
    for (const [p, entry] of cached) {
      const r = await entry;
      if (r.found) rows.push({ taskKey: p, mapIndex: null, resultJson: r.json, cached: r });
    }
    const sizes = new Map(await counts);
    for (const [p, entry] of cachedRows) {
      const m = await entry;
      rows.push(...m.rows);
      sizes.set(p, m.size);
    }
    return { rows, sizes };
  }

  /** Keeps a mapped parent's rows (see mappedRows), counted by their results' sizes; a failed read is not kept. */
  private keepRows(key: string, entry: Promise<MappedParent>): void {
    this.mappedRows.set(key, entry);
    entry.then(
      (m) => this.account(key, entry, m.rows.reduce((n, r) => n + (r.resultJson?.length ?? 0) + 16, key.length)),
      () => this.forget(key, entry),
    );
  }

  private account(key: string, entry: Promise<unknown>, bytes: number): void {
    if (this.entryOf(key) !== entry) return;
    this.resultBytes.set(key, (this.resultBytes.get(key) ?? 0) + bytes);
    this.cachedBytes += bytes;
    for (const oldest of [...this.results.keys(), ...this.mappedRows.keys()]) {
      if (this.cachedBytes <= RESULT_CACHE_BYTES) break;
      if (oldest === key) continue;
      this.forget(oldest);
    }
  }

  private entryOf(key: string): Promise<unknown> | undefined {
    return this.results.get(key) ?? this.mappedRows.get(key);
  }

  private forget(key: string, entry?: Promise<unknown>): void {
    if (entry && this.entryOf(key) !== entry) return;
    this.results.delete(key);
    this.mappedRows.delete(key);
    this.cachedBytes -= this.resultBytes.get(key) ?? 0;
    this.resultBytes.delete(key);
  }

  private shape(dagRunId: string): Promise<Shape | null> {
    let s = this.shapes.get(dagRunId);
    if (!s) {
      s = findDagRunShape(this.mongo, dagRunId).then((d) => {
        if (!d) return null;
        const mappedKeys = new Set(d.tasks.filter((t) => t.mapOver).map((t) => t.key));
        return {
          paramsJson: d.paramsJson,
          tasks: new Map(d.tasks.map((t) => [t.key, { dependsOn: t.dependsOn, mapOver: t.mapOver, mapped: mappedKeys.has(t.key), trigger: t.trigger ?? TriggerRule.ALL_SUCCESS }])),
        };
      });
      if (this.shapes.size >= SHAPE_CACHE) this.shapes.delete(this.shapes.keys().next().value!);
      this.shapes.set(dagRunId, s);
      s.catch(() => this.shapes.delete(dagRunId));
    }
    return s;
  }

  /** The files of a DAG task run; throws (with a message for the user) when they cannot be made. */
  async filesFor(run: Pick<RunDoc, "dagRunId" | "taskKey" | "mapIndex"> & Partial<Pick<RunDoc, "fireKey">>): Promise<TaskFiles> {
    const shape = run.dagRunId ? await this.shape(run.dagRunId) : null;
    if (!shape) throw new Error(`DAG run ${run.dagRunId} not found (deleted?)`);
    const def = shape.tasks.get(run.taskKey ?? "");
    if (!def) throw new Error(`task ${run.taskKey} is not in DAG run ${run.dagRunId}`);
    const task: InputsTask = { dependsOn: def.dependsOn, mapped: new Set(def.dependsOn.filter((p) => shape.tasks.get(p)?.mapped)), mapOver: def.mapOver };
    // A mapped parent's rows are shared by the readers of one DAG attempt that start after all their parents ended.
    const attempt = run.fireKey ? dagAttemptOfFireKey(run.fireKey) : null;
    const mappedKey = attempt !== null && AFTER_ALL_PARENTS.has(def.trigger) ? (p: string) => `${run.dagRunId}\n${p}\n@${attempt}` : null;
    const { rows, sizes } = def.dependsOn.length > 0 ? await this.parentResults(run.dagRunId!, def.dependsOn, task.mapped, mappedKey) : { rows: [], sizes: new Map<string, number>() };
    const inputsJson = inputsJsonOf({ ...task, sizes }, run.mapIndex ?? null, rows, (row) => this.startsOf(row));
    const size = Buffer.byteLength(inputsJson);
    if (size > MAX_INPUTS_BYTES) throw inputsTooLarge(size);
    return { inputsJson, paramsJson: shape.paramsJson };
  }

  /**
   * Where the elements of an unmapped parent's result begin (null: not an array), kept with its
   * cached result (and counted in the cache's bytes) so that a fan-out's children find their
   * `item` without reading the whole list again.
   */
  private startsOf(row: ParentRow): Uint32Array | null {
    const json = row.resultJson ?? null;
    if (json === null) return null;
    const c = row.cached;
    if (!c || c.json !== json) return elementStarts(json);
    if (c.starts === undefined) {
      c.starts = elementStarts(json);
      if (c.starts) this.account(c.owner.key, c.owner.entry, c.starts.byteLength);
    }
    return c.starts;
  }
}

/** A task key that JSON.stringify writes as `"<key>"`, and that an object keeps in insertion order (not an array index, not `__proto__`). */
const PLAIN_KEY = /^[A-Za-z][A-Za-z0-9_-]*$/;

/**
 * The JSON text of a task's inputs object (docs/dags.md, "Data along edges"): `{parentKey: result}`
 * in `dependsOn` order, a mapped parent's result the array of its instances' (null where one has
 * none), and for a mapped instance (`mapIndex` not null) `item` and `index` last.
 *
 * Made from the parents' stored texts rather than by parsing them and serialising the whole object
 * again: a fan-out's 1,000 children each get the parent's list of 1,000, and parsing and writing
 * it anew for each was quadratic. The texts are as checkResult stored them (JSON.stringify of
 * what JSON.parse made of the task's file), so each is exactly what JSON.stringify would write for
 * its value, and the whole text is exactly JSON.stringify of the object the value-by-value
 * construction (inputsByValue) makes; for a shape where that could differ (a key that is not a
 * plain task key, a mapped parent's run without an index or an unmapped one's with one: never
 * stored by Kairos), that construction is used. Throws when the parents' results alone exceed
 * MAX_INPUTS_BYTES.
 */
export function inputsJsonOf(task: InputsTask, mapIndex: number | null, rows: readonly ParentRow[], startsOf: (row: ParentRow) => Uint32Array | null = (r) => (r.resultJson == null ? null : elementStarts(r.resultJson))): string {
  // Refused on the texts' sizes, before anything is built: a join of 1,000 parents of 64 KiB each
  // is 64 MB of text, and again as one string, in the executor's heap.
  const bytes = rows.reduce((n, r) => n + (r.resultJson == null ? 0 : Buffer.byteLength(r.resultJson)), 0);
  if (bytes > MAX_INPUTS_BYTES) throw inputsTooLarge(bytes);
  const instance = !!task.mapOver && mapIndex != null;
  const parents = new Set(task.dependsOn);
  const plain =
    parents.size === task.dependsOn.length &&
    task.dependsOn.every((p) => PLAIN_KEY.test(p) && !(instance && (p === "item" || p === "index"))) &&
    rows.every((r) => parents.has(r.taskKey!) && (task.mapped.has(r.taskKey!) ? Number.isInteger(r.mapIndex) && r.mapIndex! >= 0 : r.mapIndex == null)) &&
    (!instance || (Number.isInteger(mapIndex) && mapIndex! >= 0));
  if (!plain) return JSON.stringify(inputsByValue(task, mapIndex, rows));
  // Each parent's value as JSON text (a mapped parent's as its instances' texts), the last row of a
  // parent (or of an instance) winning, as in inputsByValue.
  const single = new Map<string, ParentRow>();
  const lists = new Map<string, string[]>();
  for (const p of task.dependsOn) if (task.mapped.has(p)) lists.set(p, new Array<string>(task.sizes?.get(p) ?? 0));
  for (const r of rows) {
    const list = lists.get(r.taskKey!);
    if (list) list[r.mapIndex!] = r.resultJson ?? "null";
    else single.set(r.taskKey!, r);
  }
  const parts: string[] = [];
  for (const p of task.dependsOn) {
    const list = lists.get(p);
    if (list) {
      for (let i = 0; i < list.length; i++) list[i] ??= "null";
      parts.push(`"${p}":[${list.join(",")}]`);
    } else parts.push(`"${p}":${single.get(p)?.resultJson ?? "null"}`);
  }
  if (instance) {
    const i = mapIndex!;
    let item = "null";
    const list = lists.get(task.mapOver!);
    if (list) item = list[i] ?? "null";
    else {
      const row = parents.has(task.mapOver!) ? single.get(task.mapOver!) : undefined;
      const starts = row ? startsOf(row) : null;
      if (starts && i < starts.length) item = row!.resultJson!.slice(starts[i], i + 1 < starts.length ? starts[i + 1]! - 1 : row!.resultJson!.length - 1);
    }
    parts.push(`"item":${item}`, `"index":${JSON.stringify(i)}`);
  }
  return `{${parts.join(",")}}`;
}

/**
 * The inputs object built value by value: each parent's result parsed and put in place. What
 * inputsJsonOf's text is JSON.stringify of; used as it is only for shapes Kairos does not store.
 */
export function inputsByValue(task: InputsTask, mapIndex: number | null, rows: readonly ParentRow[]): Record<string, unknown> {
  const inputs: Record<string, unknown> = {};
  for (const parent of task.dependsOn) inputs[parent] = task.mapped.has(parent) ? new Array<unknown>(task.sizes?.get(parent) ?? 0) : null;
  for (const r of rows) {
    const value = r.resultJson == null ? null : (JSON.parse(r.resultJson) as unknown);
    const list = inputs[r.taskKey!];
    if (Array.isArray(list) && r.mapIndex != null) list[r.mapIndex] = value;
    else inputs[r.taskKey!] = value;
  }
  // A mapped parent's array has one entry per instance (null where one wrote nothing).
  for (const parent of task.dependsOn) {
    const list = inputs[parent];
    if (Array.isArray(list)) for (let i = 0; i < list.length; i++) list[i] ??= null;
  }
  if (task.mapOver && mapIndex != null) {
    const source = inputs[task.mapOver];
    inputs.item = Array.isArray(source) ? (source[mapIndex] ?? null) : null;
    inputs.index = mapIndex;
  }
  return inputs;
}

/**
 * Where each element of `json` begins, when it is the text JSON.stringify writes for an array (no
 * white space: elements are separated by exactly one comma); null when it is not an array.
 */
export function elementStarts(json: string): Uint32Array | null {
  if (json.charCodeAt(0) !== 0x5b /* [ */) return null;
  if (json.length === 2) return new Uint32Array(0);
  const starts: number[] = [1];
  let depth = 0;
  for (let i = 1; i < json.length - 1; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // A string: to its closing quote, stepping over escapes.
      for (i++; json.charCodeAt(i) !== 0x22; i++) if (json.charCodeAt(i) === 0x5c /* \ */) i++;
    } else if (c === 0x5b || c === 0x7b /* [ { */) depth++;
    else if (c === 0x5d || c === 0x7d /* ] } */) depth--;
    else if (c === 0x2c /* , */ && depth === 0) starts.push(i + 1);
  }
  return Uint32Array.from(starts);
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
