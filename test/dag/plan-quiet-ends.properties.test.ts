/**
 * The premise of the engine's quiet successes (src/dag/plan/quiet-ends.ts, engine/quiet-writes.ts):
 * on random DAGs in random reachable states, recording a success the way the quiet write does
 * (an active instance of a mapped task with another instance still unended; an active task whose
 * success can be quiet, each child of it with another unended parent) and then deciding with
 * `step` gives exactly what deciding first gives, with that success in place: nothing starts,
 * nothing more is cancelled (a halted run's cancel of that instance is moot), no other state and
 * not the run's status change.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { indexGraph, initialStates, isTerminal, step, type StepInput, type TaskView } from "../../src/dag/index.js";
import { openParentCounts, quietSuccessChildren } from "../../src/dag/plan/quiet-ends.js";
import { DagRunStatus, DagTaskState as S } from "../../src/domain/index.js";
import { mapSources, prng, scenario } from "./plan-model.js";

const ACTIVE = new Set<string>([S.QUEUED, S.RUNNING, S.RETRYING]);
const clone = (tasks: Record<string, TaskView>): Record<string, TaskView> => structuredClone(tasks);

describe("quiet successes", () => {
  it("decide nothing but their own state", () => {
    fc.assert(
      fc.property(scenario(25), fc.integer(), fc.integer({ min: 0, max: 12 }), (s, seed, moves) => {
        const rnd = prng(seed);
        const graph = indexGraph(s.dag);
        const base = { dag: s.dag, mapSources: mapSources(s), failFast: rnd(2) === 0, maxParallel: null, cancelled: false } satisfies Omit<StepInput, "tasks">;
        // A reachable state: steps, with some active instances ended between them.
        let tasks = step({ ...base, tasks: initialStates(s.dag) }).tasks;
        for (let m = 0; m < moves; m++) {
          const active = Object.entries(tasks).flatMap(([key, v]) =>
            v.instances === undefined ? (ACTIVE.has(v.state) ? [{ key, index: null as number | null }] : []) : v.instances.flatMap((x, index) => (ACTIVE.has(x.state) ? [{ key, index }] : [])),
          );
          if (active.length === 0) break;
          const pick = active[rnd(active.length)]!;
          const to = rnd(4) === 0 ? S.FAILED : S.SUCCEEDED;
          if (pick.index === null) tasks[pick.key]!.state = to;
          else tasks[pick.key]!.instances![pick.index]!.state = to;
          tasks = step({ ...base, tasks }).tasks;
        }
        if (step({ ...base, tasks }).status !== DagRunStatus.RUNNING) return;
        const decided = step({ ...base, tasks });
        const openParents = openParentCounts(graph, tasks);
        // Every success the quiet write would take, checked one by one.
        for (const [key, view] of Object.entries(tasks)) {
          const quiet: Array<number | null> = [];
          if (view.instances !== undefined) {
            const unended = view.instances.filter((x) => !isTerminal(x.state)).length;
            view.instances.forEach((x, i) => ACTIVE.has(x.state) && unended > 1 && quiet.push(i));
          } else if (ACTIVE.has(view.state)) {
            const children = quietSuccessChildren(s.dag, graph, key);
            if (children && children.every((c) => openParents.get(c)! > 1)) quiet.push(null);
          }
          for (const index of quiet) {
            const after = clone(tasks);
            if (index === null) after[key]!.state = S.SUCCEEDED;
            else after[key]!.instances![index]!.state = S.SUCCEEDED;
            const r = step({ ...base, tasks: after });
            const expected = clone(decided.tasks);
            if (index === null) expected[key]!.state = S.SUCCEEDED;
            else {
              expected[key]!.instances![index]!.state = S.SUCCEEDED;
              expected[key]!.state = S.RUNNING; // some instance ended, another has not
            }
            const what = `${key}${index === null ? "" : `[${index}]`}`;
            expect(r.start, `${what}: starts nothing`).toEqual(decided.start);
            // Halted (failFast after a failure): what was to be cancelled still is, but for the instance that ended.
            expect(r.cancel, `${what}: cancels nothing more`).toEqual(decided.cancel.filter((ref) => !(ref.key === key && ref.index === index)));
            expect(r.status, `${what}: the run goes on`).toBe(DagRunStatus.RUNNING);
            expect(r.tasks, `${what}: no other state changes`).toEqual(expected);
          }
        }
      }),
      { numRuns: 400 },
    );
  });
});
