/**
 * The DAG views' pure parts, without a browser: the layered layout (longest-path layers, dummies
 * for long edges, barycenter crossing reduction), reading the API's DOT rendering back, merging
 * pages with events, and cron in words.
 */
import { describe, expect, it } from "vitest";
import { renderDot, type DagDef } from "../../src/dag/index.js";
import { DagTaskState as S } from "../../src/domain/index.js";
import { cronInWords } from "../src/ui/cron-words";
import { tasksFromDot } from "../src/views/dags/dot-graph";
import { layoutDag, type LayoutTask } from "../src/views/dags/layout";
import { CellBook, newer } from "../src/views/dags/task-cells";

const t = (key: string, ...dependsOn: string[]): LayoutTask => ({ key, dependsOn });

/** Crossings between straight segments of adjacent layers, counted from the layout's points. */
function crossings(tasks: LayoutTask[]): number {
  const l = layoutDag(tasks);
  const segs: Array<[number, number, number, number]> = [];
  for (const e of l.edges) for (let i = 0; i + 1 < e.points.length; i += 1) {
    const [x0, y0] = e.points[i];
    const [x1, y1] = e.points[i + 1];
    if (x1 > x0 + 1) segs.push([x0, y0, x1, y1]);
  }
  let c = 0;
  for (let i = 0; i < segs.length; i++)
    for (let j = i + 1; j < segs.length; j++) {
      const [a, b] = [segs[i], segs[j]];
      if (a[0] !== b[0] || a[2] !== b[2]) continue;
      if ((a[1] - b[1]) * (a[3] - b[3]) < 0) c++;
    }
  return c;
}

describe("layoutDag", () => {
  it("puts each task one layer after its deepest parent, left to right", () => {
    const l = layoutDag([t("a"), t("b", "a"), t("c", "b"), t("d", "a", "c")]);
    const layer = Object.fromEntries(l.nodes.map((n) => [n.key, n.layer]));
    expect(layer).toEqual({ a: 0, b: 1, c: 2, d: 3 });
    const x = Object.fromEntries(l.nodes.map((n) => [n.key, n.x]));
    expect(x.a).toBeLessThan(x.b);
    // The long edge a → d bends through a point per layer it crosses: start, two per dummy, end.
    expect(l.edges.find((e) => e.from === "a" && e.to === "d")!.points).toHaveLength(2 + 2 * 2);
    expect(l.order).toEqual(["a", "b", "c", "d"]);
  });

  it("reorders a layer to remove the crossings its declaration order makes", () => {
    // Declared so that x1→y2 and x2→y1 cross when kept in declaration order.
    const tasks = [t("x1"), t("x2"), t("y1", "x2"), t("y2", "x1"), t("z1", "y1"), t("z2", "y2")];
    expect(crossings(tasks)).toBe(0);
    const wide = [t("r")];
    for (let i = 0; i < 6; i++) wide.push(t(`m${i}`, "r"));
    for (let i = 0; i < 6; i++) wide.push(t(`c${i}`, `m${5 - i}`));
    expect(crossings(wide)).toBe(0);
  });

  it("lays out 1,000 tasks quickly and keeps every task once", () => {
    const tasks = [t("root")];
    for (let i = 0; i < 999; i++) tasks.push(t(`t${i}`, i < 30 ? "root" : `t${(i * 7) % (i - 1 || 1)}`));
    const started = performance.now();
    const l = layoutDag(tasks);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(new Set(l.nodes.map((n) => n.key)).size).toBe(1000);
    expect(l.order).toHaveLength(1000);
  });

  it("stays finite on a cycle (the API refuses them; a bad answer must not hang the page)", () => {
    const l = layoutDag([t("a", "b"), t("b", "a")]);
    expect(l.nodes).toHaveLength(2);
  });
});

describe("tasksFromDot", () => {
  it("reads back the tasks, dependencies and mapped tasks of the API's own DOT", () => {
    const dag: DagDef = {
      tasks: [
        { key: "extract", dependsOn: [] },
        { key: "transform", dependsOn: ["extract"], mapOver: "extract" },
        { key: "audit", dependsOn: ["extract"] },
        { key: "load", dependsOn: ["transform", "audit"] },
      ],
    };
    const back = tasksFromDot(renderDot(dag, { extract: S.SUCCEEDED, transform: S.RUNNING }));
    expect(back.map((x) => ({ key: x.key, dependsOn: [...x.dependsOn].sort(), mapped: !!x.mapOver }))).toEqual([
      { key: "extract", dependsOn: [], mapped: false },
      { key: "transform", dependsOn: ["extract"], mapped: true },
      { key: "audit", dependsOn: ["extract"], mapped: false },
      { key: "load", dependsOn: ["audit", "transform"], mapped: false },
    ]);
  });
});

describe("CellBook", () => {
  it("keeps the cell further along, whichever came last: a page read after an event, or an event after a page", () => {
    expect(newer({ status: "SUCCEEDED", attempt: 1 }, { status: "RUNNING", attempt: 1 })?.status).toBe("SUCCEEDED");
    expect(newer({ status: "RUNNING", attempt: 1 }, { status: "SUCCEEDED", attempt: 1 })?.status).toBe("SUCCEEDED");
    // A retry from failed starts attempt 2 from PENDING: newer than attempt 1's FAILED.
    expect(newer({ status: "FAILED", attempt: 1 }, { status: "PENDING", attempt: 2 })?.status).toBe("PENDING");
    expect(newer({ status: "QUEUED", attempt: 2 }, { status: "FAILED", attempt: 1 })?.status).toBe("QUEUED");
  });

  it("merges a mapped task's instances from pages and events, in index order", () => {
    const book = new CellBook();
    book.setBase("r", [
      { key: "m", status: "RUNNING", attempt: 1, mapped: true },
      { key: "m", mapIndex: 0, status: "RUNNING", attempt: 1, run: { id: "run0", startedAt: "2026-01-01T00:00:00Z" } },
    ]);
    book.apply("r", { key: "m", mapIndex: 1, status: "RUNNING", attempt: 1, runId: "run1", at: "2026-01-01T00:00:01Z" });
    book.apply("r", { key: "m", mapIndex: 0, status: "SUCCEEDED", attempt: 1, at: "2026-01-01T00:00:02Z" });
    const inst = book.instances("r", "m");
    expect([...inst.keys()]).toEqual([0, 1]);
    expect(inst.get(0)).toMatchObject({ status: "SUCCEEDED", runId: "run0", startedAt: "2026-01-01T00:00:00Z", finishedAt: "2026-01-01T00:00:02Z" });
    expect(inst.get(1)).toMatchObject({ status: "RUNNING", runId: "run1", startedAt: "2026-01-01T00:00:01Z" });
    expect(book.task("r", "m")?.status).toBe("RUNNING");
  });
});

describe("cronInWords", () => {
  it.each([
    ["* * * * *", "every minute"],
    ["*/5 * * * *", "every 5 minutes"],
    ["0 * * * *", "every hour, on the hour"],
    ["15 */2 * * *", "every 2 hours at minute 15"],
    ["0 3 * * *", "daily at 03:00"],
    ["0 0 3 * * *", "daily at 03:00"],
    ["30 9 * * 1-5", "at 09:30 on weekdays"],
    ["0 8 * * 1,3", "at 08:00 on Mon, Wed"],
    ["0 6 1 * *", "at 06:00 on day 1 of each month"],
    ["@daily", "daily at 00:00"],
  ])("%s → %s", (cron, words) => {
    expect(cronInWords(cron)).toBe(words);
  });

  it.each(["0 3 * 1 *", "0 3 1 * 1", "*/5 3 * * *", "0 3 * * MON", "30 0 3 * * *", "0 0-6 * * *"])("says nothing it is not sure of: %s", (cron) => {
    expect(cronInWords(cron)).toBeNull();
  });
});
