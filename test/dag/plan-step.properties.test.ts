/**
 * Property tests of `step` driven as a simulated engine (plan-model.ts): random DAGs up to 40
 * tasks with random trigger rules and mapped tasks, random completion orders, failures, retries,
 * cancels, failFast and maxParallel. Checked on every step: each instance starts at most once per
 * attempt and only when its rule allows, a terminal state never changes, no more than maxParallel
 * active, nothing starts after a cancel or (failFast) a failure, deciding twice starts nothing
 * more; and at the end: the run terminated, in the states and status an independent oracle
 * derives from the trigger rules.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { initialStates, retryFromFailed, step, type InstanceRef, type StepInput, type TaskView } from "../../src/dag/index.js";
import { DagRunStatus, DagTaskState as S, type DagTaskState } from "../../src/domain/index.js";
import { allowsRun, instances, isDone, leafKeys, mapSources, oracle, prng, refId, scenario, type Scenario } from "./plan-model.js";

interface SimOptions {
  failFast: boolean;
  maxParallel: number | null;
  /** The user cancels once this many steps have run; null: never. */
  cancelAt: number | null;
  seed: number;
}

interface SimEnd {
  tasks: Record<string, TaskView>;
  status: DagRunStatus;
  /** The user's cancel happened before the run ended by itself. */
  cancelled: boolean;
}

// Each property runs a few seconds on an idle machine; the timeouts leave room for a loaded one.
const ACTIVE = new Set<DagTaskState>([S.QUEUED, S.RUNNING, S.RETRYING]);
const states = (tasks: Record<string, TaskView>) => Object.fromEntries(Object.entries(tasks).map(([k, v]) => [k, v.state]));

/** Runs the DAG to its end with `step` as the only decision maker, checking invariants throughout. */
function simulate(s: Scenario, opts: SimOptions, start: Record<string, TaskView>, started: Set<string>, succeedAll: boolean): SimEnd {
  const rnd = prng(opts.seed);
  const defs = new Map(s.dag.tasks.map((t) => [t.key, t]));
  const sources = mapSources(s);
  const retried = new Set<string>();
  let tasks = start;
  let cancelled = false;
  for (let i = 0; ; i++) {
    expect(i, "the simulation terminates").toBeLessThan(5_000);
    const input: StepInput = { dag: s.dag, tasks, mapSources: sources, failFast: opts.failFast, maxParallel: opts.maxParallel, cancelled };
    const r = step(input);

    const afterStates = new Map(instances(r.tasks).map((x) => [refId(x.ref), x.state]));
    for (const before of instances(tasks)) {
      if (isDone(before.state)) expect(afterStates.get(refId(before.ref)), `terminal ${refId(before.ref)} keeps its state`).toBe(before.state);
    }
    for (const [key, view] of Object.entries(tasks)) {
      if (isDone(view.state)) expect(r.tasks[key]!.state, `terminal task ${key} keeps its state`).toBe(view.state);
    }
    if (r.start.length > 0) {
      const anyFailed = instances(r.tasks).some((x) => x.state === S.FAILED) || Object.values(r.tasks).some((v) => v.state === S.FAILED);
      expect(cancelled, "nothing starts after a cancel").toBe(false);
      expect(opts.failFast && anyFailed, "nothing starts under failFast after a failure").toBe(false);
    }
    for (const ref of r.start) {
      expect(started.has(refId(ref)), `${refId(ref)} starts once`).toBe(false);
      started.add(refId(ref));
      const def = defs.get(ref.key)!;
      const parents = def.dependsOn.map((p) => r.tasks[p]!.state);
      expect(allowsRun(def.trigger, parents), `${refId(ref)} starts only when ${def.trigger} allows (${parents})`).toBe(true);
      if (def.mapOver !== undefined) expect(r.tasks[def.mapOver]!.state).toBe(S.SUCCEEDED);
    }
    const active = instances(r.tasks).filter((x) => ACTIVE.has(x.state)).length;
    if (opts.maxParallel !== null) expect(active).toBeLessThanOrEqual(opts.maxParallel);
    const again = step({ ...input, tasks: r.tasks });
    expect(again.start, "deciding twice starts nothing more").toEqual([]);
    expect(again.changed).toEqual([]);
    expect(again.status).toBe(r.status);

    tasks = r.tasks;
    if (r.status !== DagRunStatus.RUNNING) {
      expect(instances(tasks).every((x) => isDone(x.state)), "a finished run has nothing active").toBe(true);
      expect(Object.values(tasks).every((v) => isDone(v.state))).toBe(true);
      return { tasks, status: r.status, cancelled };
    }
    const events: (() => void)[] = [];
    for (const { ref, state } of instances(tasks)) {
      if (ACTIVE.has(state)) events.push(() => advance(s, tasks, ref, state, retried, succeedAll));
    }
    for (const ref of r.cancel) events.push(() => setState(tasks, ref, S.CANCELLED));
    if (opts.cancelAt !== null && i >= opts.cancelAt && !cancelled) events.push(() => (cancelled = true));
    expect(events.length, `the run is not stuck: ${JSON.stringify(states(tasks))}`).toBeGreaterThan(0);
    tasks = structuredClone(tasks);
    events[rnd(events.length)]!();
  }
}

/** One move of an active run: QUEUED → RUNNING → (RETRYING → RUNNING →) SUCCEEDED or FAILED. */
function advance(s: Scenario, tasks: Record<string, TaskView>, ref: InstanceRef, state: DagTaskState, retried: Set<string>, succeedAll: boolean): void {
  if (state !== S.RUNNING) return setState(tasks, ref, S.RUNNING);
  const outcome = succeedAll ? "S" : s.outcomes[ref.key]![ref.index ?? 0]!;
  if (outcome.startsWith("R") && !retried.has(refId(ref))) {
    retried.add(refId(ref));
    return setState(tasks, ref, S.RETRYING);
  }
  setState(tasks, ref, outcome.endsWith("S") ? S.SUCCEEDED : S.FAILED);
}

function setState(tasks: Record<string, TaskView>, ref: InstanceRef, state: DagTaskState): void {
  const view = tasks[ref.key]!;
  if (ref.index === null) {
    if (ACTIVE.has(view.state)) view.state = state;
  } else if (ACTIVE.has(view.instances![ref.index]!.state)) {
    view.instances![ref.index]!.state = state;
  }
}

function leafStatus(s: Scenario, final: Record<string, DagTaskState>): DagRunStatus {
  return leafKeys(s.dag).every((k) => final[k] === S.SUCCEEDED || final[k] === S.SKIPPED) ? DagRunStatus.SUCCEEDED : DagRunStatus.FAILED;
}

const options = (cancel: boolean) =>
  fc.record({
    failFast: fc.boolean(),
    maxParallel: fc.option(fc.integer({ min: 1, max: 6 })),
    cancelAt: cancel ? fc.nat(60) : fc.constant(null),
    seed: fc.noShrink(fc.integer()),
  });

describe("step as a simulated engine", () => {
  it("ends in the states and status the trigger rules imply, whatever the order", () => {
    fc.assert(
      fc.property(scenario(), options(false), (s, opts) => {
        const end = simulate(s, { ...opts, failFast: false }, initialStates(s.dag), new Set(), false);
        const expected = oracle(s);
        expect(states(end.tasks)).toEqual(expected);
        expect(end.status).toBe(leafStatus(s, expected));
      }),
      { numRuns: 150 },
    );
  }, 120_000);

  it("failFast: stops starting on the first failure, and without failures ends as the rules imply", () => {
    fc.assert(
      fc.property(scenario(), options(false), (s, opts) => {
        const end = simulate(s, { ...opts, failFast: true }, initialStates(s.dag), new Set(), false);
        const final = states(end.tasks);
        const anyFailed = Object.values(end.tasks).some((v) => v.state === S.FAILED || (v.instances ?? []).some((i) => i.state === S.FAILED));
        expect(end.status).toBe(anyFailed ? DagRunStatus.FAILED : leafStatus(s, final));
        const expected = oracle(s);
        if (!Object.values(expected).includes(S.FAILED)) expect(final).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  }, 120_000);

  it("cancel: the run ends CANCELLED with nothing started after it", () => {
    fc.assert(
      fc.property(scenario(), options(true), (s, opts) => {
        const end = simulate(s, opts, initialStates(s.dag), new Set(), false);
        if (end.cancelled) expect(end.status).toBe(DagRunStatus.CANCELLED);
        else expect([DagRunStatus.SUCCEEDED, DagRunStatus.FAILED]).toContain(end.status);
      }),
      { numRuns: 150 },
    );
  }, 120_000);

  it("retry from failed reruns only what did not succeed and then ends as the rules imply", () => {
    fc.assert(
      fc.property(scenario(), options(true), fc.boolean(), (s, opts, failFastAgain) => {
        const started = new Set<string>();
        const first = simulate(s, opts, initialStates(s.dag), started, false);
        const kept = states(first.tasks);
        const reset = retryFromFailed(first.tasks);
        for (const [key, view] of Object.entries(first.tasks)) {
          if (view.state === S.SUCCEEDED) expect(reset[key]).toEqual(view);
          else expect(reset[key]!.state).toBe(S.PENDING);
        }
        const second = simulate(s, { ...opts, failFast: failFastAgain, cancelAt: null }, reset, started, true);
        const expected = oracle(s, kept, true);
        // A map over a non-array fails again; under failFast that cancels the rest and fails the run.
        if (!failFastAgain || !Object.values(expected).includes(S.FAILED)) {
          expect(states(second.tasks)).toEqual(expected);
          expect(second.status).toBe(leafStatus(s, expected));
        } else {
          expect(second.status).toBe(DagRunStatus.FAILED);
        }
      }),
      { numRuns: 100 },
    );
  }, 120_000);
});

