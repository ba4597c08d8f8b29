/**
 * A simulated engine around `step` for the property tests, and an independent oracle: the final
 * task states the trigger rules imply, computed from each task's outcome without any timing.
 */
import fc from "fast-check";
import type { DagDef, DagTaskDef, InstanceRef, TaskView } from "../../src/dag/index.js";
import { DagTaskState as S, TriggerRule as R, type DagTaskState, type TriggerRule } from "../../src/domain/index.js";

/** What an instance's run does once started: succeed or fail, maybe after one RETRYING. */
export type Outcome = "S" | "F" | "RS" | "RF";

/** A random DAG with, per task, the outcomes of its run(s) and the length of its result. */
export interface Scenario {
  dag: DagDef;
  /** Outcome per key, per instance index (index 0 for a plain task). */
  outcomes: Record<string, Outcome[]>;
  /** Each task's result: an array of this length, or -1 for a result that is not an array. */
  resultLength: Record<string, number>;
  /** Keys in generation order: parents always come earlier (independent of src/ topo code). */
  generationOrder: string[];
}

const TRIGGERS = Object.values(R);
const trigger: fc.Arbitrary<TriggerRule> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(R.ALL_SUCCESS) },
  { weight: 3, arbitrary: fc.constantFrom(...TRIGGERS) },
);
const outcome: fc.Arbitrary<Outcome> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Outcome>("S") },
  { weight: 2, arbitrary: fc.constant<Outcome>("F") },
  { weight: 1, arbitrary: fc.constantFrom<Outcome>("RS", "RF") },
);

/** Up to `maxTasks` tasks, each with up to 3 earlier parents, some mapped over a parent. */
export function scenario(maxTasks = 40, failRate: "some" | "none" = "some"): fc.Arbitrary<Scenario> {
  const taskArb = fc.record({
    picks: fc.uniqueArray(fc.nat(), { maxLength: 3 }),
    trigger,
    mapped: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    outcomes: fc.array(failRate === "none" ? fc.constant<Outcome>("S") : outcome, { minLength: 5, maxLength: 5 }),
    resultLength: fc.oneof({ weight: 8, arbitrary: fc.nat(4) }, { weight: 1, arbitrary: fc.constant(-1) }),
    priority: fc.nat(2),
  });
  return fc.integer({ min: 1, max: maxTasks }).chain((n) =>
    fc.tuple(fc.array(taskArb, { minLength: n, maxLength: n }), fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n })).map(
      ([raw, declaration]) => {
        const keys = raw.map((_, i) => `k${i}`);
        const defs: DagTaskDef[] = raw.map((r, i) => {
          const parents = i === 0 ? [] : [...new Set(r.picks.map((p) => keys[p % i]!))];
          const def: DagTaskDef = { key: keys[i]!, dependsOn: parents, trigger: r.trigger, priority: r.priority };
          if (r.mapped && parents.length > 0) def.mapOver = parents[0];
          return def;
        });
        return {
          dag: { tasks: declaration.map((i) => defs[i]!) },
          outcomes: Object.fromEntries(raw.map((r, i) => [keys[i], r.outcomes])),
          resultLength: Object.fromEntries(raw.map((r, i) => [keys[i], r.resultLength])),
          generationOrder: keys,
        };
      },
    ),
  );
}

/** The parsed results the engine would hand to `step` as `mapSources`. */
export function mapSources(s: Scenario): Record<string, unknown> {
  return Object.fromEntries(Object.entries(s.resultLength).map(([k, n]) => [k, n < 0 ? { not: "an array" } : new Array(n).fill(k)]));
}

const FAILED = new Set<DagTaskState>([S.FAILED, S.UPSTREAM_FAILED, S.CANCELLED]);
const TERMINAL = new Set<DagTaskState>([S.SUCCEEDED, S.FAILED, S.UPSTREAM_FAILED, S.SKIPPED, S.CANCELLED]);
export const isDone = (s: DagTaskState) => TERMINAL.has(s);

/** The brief's "run when …" conditions: may a task with these parent states start now? */
export function allowsRun(rule: TriggerRule | undefined, parents: DagTaskState[]): boolean {
  if (parents.length === 0) return true;
  const ok = parents.filter((p) => p === S.SUCCEEDED).length;
  const ko = parents.filter((p) => FAILED.has(p)).length;
  const done = parents.every(isDone);
  switch (rule ?? R.ALL_SUCCESS) {
    case R.ALL_SUCCESS:
      return ok === parents.length;
    case R.ALL_DONE:
      return done;
    case R.ALL_FAILED:
      return ko === parents.length;
    case R.ONE_SUCCESS:
      return ok > 0;
    case R.ONE_FAILED:
      return ko > 0;
    case R.NONE_FAILED:
      return done && ko === 0;
  }
}

/** The verdict on final parent states (every parent terminal). */
function finalVerdict(rule: TriggerRule | undefined, parents: DagTaskState[]): "RUN" | "UF" | "SK" {
  if (parents.length === 0) return "RUN";
  const ok = parents.filter((p) => p === S.SUCCEEDED).length;
  const ko = parents.filter((p) => FAILED.has(p)).length;
  const sk = parents.filter((p) => p === S.SKIPPED).length;
  switch (rule ?? R.ALL_SUCCESS) {
    case R.ALL_SUCCESS:
      return ko > 0 ? "UF" : sk > 0 ? "SK" : "RUN";
    case R.ALL_DONE:
      return "RUN";
    case R.ALL_FAILED:
      return ko === parents.length ? "RUN" : "SK";
    case R.ONE_SUCCESS:
      return ok > 0 ? "RUN" : sk === parents.length ? "SK" : "UF";
    case R.ONE_FAILED:
      return ko > 0 ? "RUN" : "SK";
    case R.NONE_FAILED:
      return ko > 0 ? "UF" : "RUN";
  }
}

const ends = (o: Outcome) => (o === "S" || o === "RS" ? S.SUCCEEDED : S.FAILED);

/**
 * Final states implied by the rules when nothing is cancelled: `kept` tasks (retry from failed)
 * keep their state; `succeedAll` makes every run succeed (a retry's second attempt).
 */
export function oracle(s: Scenario, kept: Record<string, DagTaskState> = {}, succeedAll = false): Record<string, DagTaskState> {
  const defs = new Map(s.dag.tasks.map((t) => [t.key, t]));
  const out: Record<string, DagTaskState> = {};
  for (const key of s.generationOrder) {
    if (kept[key] === S.SUCCEEDED) {
      out[key] = S.SUCCEEDED;
      continue;
    }
    const def = defs.get(key)!;
    const verdict = finalVerdict(def.trigger, def.dependsOn.map((p) => out[p]!));
    if (verdict === "UF") out[key] = S.UPSTREAM_FAILED;
    else if (verdict === "SK") out[key] = S.SKIPPED;
    else if (def.mapOver === undefined) out[key] = succeedAll ? S.SUCCEEDED : ends(s.outcomes[key]![0]!);
    else out[key] = mappedOutcome(s, def.mapOver, out[def.mapOver]!, s.outcomes[key]!, succeedAll);
  }
  return out;
}

function mappedOutcome(s: Scenario, source: string, sourceState: DagTaskState, outs: Outcome[], succeedAll: boolean): DagTaskState {
  if (sourceState !== S.SUCCEEDED) return sourceState === S.SKIPPED ? S.SKIPPED : S.UPSTREAM_FAILED;
  const n = s.resultLength[source]!;
  if (n < 0) return S.FAILED;
  if (n === 0) return S.SKIPPED;
  if (succeedAll) return S.SUCCEEDED;
  return outs.slice(0, n).some((o) => ends(o) === S.FAILED) ? S.FAILED : S.SUCCEEDED;
}

/** Leaves computed from the definition directly. */
export function leafKeys(dag: DagDef): string[] {
  const parents = new Set(dag.tasks.flatMap((t) => t.dependsOn));
  return dag.tasks.map((t) => t.key).filter((k) => !parents.has(k));
}

/** A small deterministic PRNG (mulberry32) so a failing seed replays. */
export function prng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n: number) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

export const refId = (r: InstanceRef) => `${r.key}[${r.index ?? "-"}]#${r.attempt}`;

/** Every instance of the run, with its current state. */
export function instances(tasks: Record<string, TaskView>): { ref: InstanceRef; state: DagTaskState }[] {
  const out: { ref: InstanceRef; state: DagTaskState }[] = [];
  for (const [key, view] of Object.entries(tasks)) {
    if (view.instances === undefined) out.push({ ref: { key, index: null, attempt: view.attempt }, state: view.state });
    else view.instances.forEach((i, index) => out.push({ ref: { key, index, attempt: i.attempt }, state: i.state }));
  }
  return out;
}
