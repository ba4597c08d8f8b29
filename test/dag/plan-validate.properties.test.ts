/**
 * Property tests of validation and ordering: random DAGs are valid and ordered parents-first;
 * with cycles planted in them, every planted cycle is found and every reported path is a real cycle.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { indexGraph, topologicalOrder, validateDag, type DagDef } from "../../src/dag/index.js";
import { scenario } from "./plan-model.js";

/** Keys reachable from `from` along parent → child edges (dependsOn reversed). */
function reachable(dag: DagDef, from: string): Set<string> {
  const children = new Map<string, string[]>();
  for (const t of dag.tasks) for (const p of t.dependsOn) children.set(p, [...(children.get(p) ?? []), t.key]);
  const seen = new Set<string>([from]);
  const todo = [from];
  while (todo.length > 0) for (const c of children.get(todo.pop()!) ?? []) if (!seen.has(c)) seen.add(c), todo.push(c);
  return seen;
}

describe("validation on random DAGs", () => {
  it("accepts every random DAG and orders every parent before its children, deterministically", () => {
    fc.assert(
      fc.property(scenario(60), ({ dag }) => {
        expect(validateDag(dag)).toEqual([]);
        const order = topologicalOrder(indexGraph(dag));
        expect([...order].sort()).toEqual(dag.tasks.map((t) => t.key).sort());
        const at = new Map(order.map((k, i) => [k, i]));
        for (const t of dag.tasks) for (const p of t.dependsOn) expect(at.get(p)!).toBeLessThan(at.get(t.key)!);
        expect(topologicalOrder(indexGraph({ tasks: [...dag.tasks] }))).toEqual(order);
      }),
      { numRuns: 200 },
    );
  }, 60_000);

  it("finds every planted cycle, and each reported path is a real cycle", () => {
    const planted = scenario(40)
      .filter((s) => s.dag.tasks.length >= 2)
      .chain((s) => {
        const keys = s.dag.tasks.map((t) => t.key);
        const cycle = fc.uniqueArray(fc.constantFrom(...keys), { minLength: 2, maxLength: Math.min(5, keys.length) });
        return fc.tuple(fc.constant(s.dag), fc.array(cycle, { minLength: 1, maxLength: 3 }));
      });
    fc.assert(
      fc.property(planted, ([dag, cycles]) => {
        const extra = new Map<string, string[]>();
        for (const c of cycles) c.forEach((key, i) => extra.set(key, [...(extra.get(key) ?? []), c[(i + c.length - 1) % c.length]!]));
        const tasks = dag.tasks.map((t) => ({ ...t, dependsOn: [...new Set([...t.dependsOn, ...(extra.get(t.key) ?? [])])] }));
        const withCycles: DagDef = { tasks };
        const problems = validateDag(withCycles);
        const reported = problems.map((p) => /^dependsOn makes a cycle: (.*); a DAG must have none$/.exec(p.message));
        expect(reported.every((m) => m !== null), JSON.stringify(problems)).toBe(true);
        const paths = reported.map((m) => m![1]!.split(" → "));
        const parents = new Map(tasks.map((t) => [t.key, t.dependsOn]));
        for (const path of paths) {
          expect(path[0]).toBe(path[path.length - 1]);
          expect(new Set(path.slice(1)).size).toBe(path.length - 1);
          for (let i = 1; i < path.length; i++) expect(parents.get(path[i]!)).toContain(path[i - 1]);
        }
        for (const c of cycles) {
          const from = reachable(withCycles, c[0]!);
          const found = paths.some((p) => from.has(p[0]!) && reachable(withCycles, p[0]!).has(c[0]!));
          expect(found, `planted cycle ${c.join(" → ")} reported`).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  }, 60_000);
});
