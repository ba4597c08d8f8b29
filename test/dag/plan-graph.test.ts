/** Graph indexes, topological order and cycle finding (src/dag/plan/graph.ts, topo.ts). */
import { describe, expect, it } from "vitest";
import { findCycles, indexGraph, leaves, roots, topologicalOrder, type DagTaskDef } from "../../src/dag/index.js";

const t = (key: string, dependsOn: string[] = []): DagTaskDef => ({ key, dependsOn });

describe("graph index", () => {
  const graph = indexGraph({ tasks: [t("a"), t("b", ["a"]), t("c", ["a"]), t("d", ["c", "b", "b"]), t("e")] });

  it("lists parents as declared (each once) and children in declaration order", () => {
    expect(graph.parents.get("d")).toEqual(["c", "b"]);
    expect(graph.children.get("a")).toEqual(["b", "c"]);
    expect(graph.children.get("b")).toEqual(["d"]);
  });

  it("finds roots and leaves in declaration order", () => {
    expect(roots(graph)).toEqual(["a", "e"]);
    expect(leaves(graph)).toEqual(["d", "e"]);
  });

  it("ignores unknown parents, self-edges and duplicate keys", () => {
    const g = indexGraph({ tasks: [t("a", ["zz", "a"]), t("a", ["b"]), t("b")] });
    expect(g.keys).toEqual(["a", "b"]);
    expect(g.parents.get("a")).toEqual([]);
  });
});

describe("topologicalOrder", () => {
  it("puts parents first and breaks ties by declaration order", () => {
    const graph = indexGraph({ tasks: [t("d", ["b", "c"]), t("c", ["a"]), t("b", ["a"]), t("a"), t("z")] });
    expect(topologicalOrder(graph)).toEqual(["a", "c", "b", "d", "z"]);
  });

  it("takes the ready task declared first, also one that became ready later", () => {
    // After fast: slow (declared 3rd) and other (4th) are ready; after slow, late (1st) beats other.
    const graph = indexGraph({ tasks: [t("late", ["slow"]), t("fast"), t("slow", ["fast"]), t("other")] });
    expect(topologicalOrder(graph)).toEqual(["fast", "slow", "late", "other"]);
  });

  it("leaves out tasks on or behind a cycle", () => {
    const graph = indexGraph({ tasks: [t("a"), t("b", ["a", "c"]), t("c", ["b"]), t("d", ["c"])] });
    expect(topologicalOrder(graph)).toEqual(["a"]);
  });

  it("handles a 1,000-task chain", () => {
    const tasks = Array.from({ length: 1000 }, (_, i) => t(`t${i}`, i === 0 ? [] : [`t${i - 1}`]));
    expect(topologicalOrder(indexGraph({ tasks }))).toEqual(tasks.map((x) => x.key));
    tasks[0] = t("t0", ["t999"]);
    const [cycle] = findCycles(indexGraph({ tasks }));
    expect(cycle).toHaveLength(1001);
    expect(cycle![0]).toBe("t0");
  });
});

describe("findCycles", () => {
  it("returns nothing for a DAG", () => {
    expect(findCycles(indexGraph({ tasks: [t("a"), t("b", ["a"])] }))).toEqual([]);
  });

  it("returns the shortest loop through the first-declared task of the component", () => {
    // a → b → c → a, and a shortcut c → b inside the same component.
    const graph = indexGraph({ tasks: [t("a", ["c"]), t("b", ["a", "c"]), t("c", ["b"])] });
    expect(findCycles(graph)).toEqual([["a", "b", "c", "a"]]);
  });
});
