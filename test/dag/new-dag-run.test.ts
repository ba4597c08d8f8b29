/**
 * A new DAG run's stored task states (src/dag/engine/runs.ts newDagRun) are what its first advance
 * would store for every task it does not start: that advance writes the tasks it starts, not a
 * counter of every other task (a 1,000-task DAG's trigger rewrote 1,000 entries).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { newDagRun } from "../../src/dag/engine/runs.js";
import { planOf } from "../../src/dag/engine/definition.js";
import { observedStates, sameTask, storedTasks } from "../../src/dag/engine/task-states.js";
import { indexGraph } from "../../src/dag/plan/graph.js";
import { step } from "../../src/dag/plan/step.js";
import type { DagDoc } from "../../src/domain/index.js";
import { scenario } from "./plan-model.js";

describe("newDagRun", () => {
  it("stores each task as the first advance would, so that advance writes only the tasks whose state it changes", () => {
    fc.assert(
      fc.property(scenario(30), fc.boolean(), (s, failFast) => {
        const dag = {
          _id: "d",
          ownerId: "u",
          name: "d",
          version: 1,
          tasks: s.dag.tasks.map((t) => ({ key: t.key, dependsOn: t.dependsOn, trigger: t.trigger, priority: t.priority ?? 0, mapOver: t.mapOver ?? null, spec: {}, retry: null })),
          failFast,
          maxParallel: null,
          paramsJson: "{}",
        } as unknown as DagDoc;
        const doc = newDagRun(dag, { id: "r", fireKey: "r", trigger: "MANUAL", scheduledFor: 0, paramsJson: "{}", now: 0, sweepAfterMs: 1 });
        const plan = planOf(dag.tasks);
        const decided = step({ dag: plan, tasks: observedStates(doc, new Map()), mapSources: {}, failFast, maxParallel: null, cancelled: false });
        const after = storedTasks(decided, doc.tasks, indexGraph(plan));
        const written = Object.keys(after).filter((k) => !sameTask(after[k]!, doc.tasks[k]));
        expect(written.filter((k) => after[k]!.state === doc.tasks[k]!.state)).toEqual([]);
        // It starts the roots, and writes them.
        for (const ref of decided.start) expect(written).toContain(ref.key);
      }),
    );
  });
});
