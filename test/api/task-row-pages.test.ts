/**
 * Relay pages of a DAG run's task rows (src/resolvers/task-row-pages.ts): a cursor names a row
 * (task key, instance index), so instances that appear while a client pages do not shift it.
 */
import { describe, expect, it } from "vitest";
import { encodeCursor } from "../../src/store/pages.js";
import { MAX_TASK_ROWS, taskRowCursor, taskRowPage, taskRowsPageSize, type TaskRowId } from "../../src/resolvers/task-row-pages.js";

const row = (key: string, mapIndex: number | null = null): TaskRowId => ({ key, mapIndex });
/** a; m (mapped) with `n` instances; z. */
const rows = (n: number): TaskRowId[] => [row("a"), row("m"), ...Array.from({ length: n }, (_, i) => row("m", i)), row("z")];
const keys = (rs: readonly TaskRowId[], p: { start: number; end: number }) => rs.slice(p.start, p.end).map((r) => (r.mapIndex === null ? r.key : `${r.key}[${r.mapIndex}]`));

describe("taskRowPage", () => {
  it("pages from the first row, then after the row the cursor names, to the end", () => {
    const rs = rows(3);
    const first = taskRowPage(rs, 2, null);
    expect([keys(rs, first), first.hasNextPage]).toEqual([["a", "m"], true]);
    const second = taskRowPage(rs, 2, taskRowCursor(rs[first.end - 1]!));
    expect([keys(rs, second), second.hasNextPage]).toEqual([["m[0]", "m[1]"], true]);
    const last = taskRowPage(rs, 2, taskRowCursor(rs[second.end - 1]!));
    expect([keys(rs, last), last.hasNextPage]).toEqual([["m[2]", "z"], false]);
    expect(taskRowPage(rs, 2, taskRowCursor(row("z")))).toEqual({ start: 6, end: 6, hasNextPage: false });
  });
  it("instances that appear before the cursor do not shift the next page (a skip would repeat rows)", () => {
    const cursor = taskRowCursor(row("m", 1)); // read a, m, m[0], m[1] while m had 2 instances
    const grown = rows(5);
    expect(keys(grown, taskRowPage(grown, 10, cursor))).toEqual(["m[2]", "m[3]", "m[4]", "z"]);
    // A mapped task's own row as the cursor: its instances come next, however many there are now.
    expect(keys(grown, taskRowPage(grown, 2, taskRowCursor(row("m"))))).toEqual(["m[0]", "m[1]"]);
  });
  it("an instance gone since the cursor (fewer instances after a retry) continues at the task's next row past it", () => {
    const shrunk = rows(1);
    expect(keys(shrunk, taskRowPage(shrunk, 10, taskRowCursor(row("m", 4))))).toEqual(["z"]);
  });
  it("refuses a cursor naming a task the DAG run does not have, one of another list, and one that is not a cursor", () => {
    expect(() => taskRowPage(rows(1), 10, taskRowCursor(row("gone")))).toThrow(/after: names task "gone", which this DAG run does not have/);
    expect(() => taskRowPage(rows(1), 10, encodeCursor(new Date(0), "run-1"))).toThrow(/after: not a cursor of a DAG run's tasks/);
    expect(() => taskRowPage(rows(1), 10, "%%%")).toThrow(/after: not a cursor of a DAG run's tasks/);
    expect(() => taskRowPage(rows(1), 10, Buffer.from(JSON.stringify(["task", "a", -1])).toString("base64url"))).toThrow(/after: not a cursor/);
  });
});

describe("taskRowsPageSize", () => {
  it(`takes 1 to ${MAX_TASK_ROWS} rows`, () => {
    expect(taskRowsPageSize(1)).toBe(1);
    expect(taskRowsPageSize(MAX_TASK_ROWS)).toBe(MAX_TASK_ROWS);
    for (const bad of [0, MAX_TASK_ROWS + 1, 1.5, -3]) expect(() => taskRowsPageSize(bad)).toThrow(`first: must be from 1 to ${MAX_TASK_ROWS} (got ${bad})`);
  });
});
