/**
 * A DAG task's KAIROS_INPUTS text (src/dag/engine/io.ts inputsJsonOf), made from its parents'
 * stored result texts: always exactly JSON.stringify of the object built value by value (each
 * result parsed and put in place, inputsByValue), for mapped, unmapped and mixed parents, results
 * that are null or missing, and mapped instances of either kind of parent.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { elementStarts, inputsByValue, inputsJsonOf, MAX_INPUTS_BYTES, type InputsTask, type ParentRow } from "../../src/dag/engine/io.js";

/** A result as checkResult stores it: JSON.stringify of a parsed value. */
const resultText = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(JSON.parse(JSON.stringify(v))) as string);
/** Lists, so that a mapped child of an unmapped parent finds its item. */
const listText = fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 6 }).map((v) => JSON.stringify(v));
const keyArb = fc.constantFrom("root", "a", "b-2", "C_3", "list", "z9");

const caseArb = fc
  .record({
    parents: fc.uniqueArray(fc.record({ key: keyArb, mapped: fc.boolean(), size: fc.option(fc.nat(9), { nil: undefined }) }), { selector: (p) => p.key, maxLength: 4 }),
    mapOverPick: fc.option(fc.nat(5), { nil: null }),
    mapIndex: fc.option(fc.nat(7), { nil: null }),
    rowPicks: fc.array(
      fc.record({ parent: fc.nat(5), index: fc.nat(6), text: fc.option(fc.oneof(resultText, listText), { nil: null }), missingField: fc.boolean() }),
      { maxLength: 12 },
    ),
  })
  .map(({ parents, mapOverPick, mapIndex, rowPicks }) => {
    const task: InputsTask = {
      dependsOn: parents.map((p) => p.key),
      mapped: new Set(parents.filter((p) => p.mapped).map((p) => p.key)),
      // A mapped parent's instance count (from its DAG run), when known: at least as many entries.
      sizes: new Map(parents.filter((p) => p.mapped && p.size !== undefined).map((p) => [p.key, p.size!])),
      // Over one of its parents, or (to see that it gives null) over a task it does not depend on.
      mapOver: mapOverPick === null ? null : (parents[mapOverPick]?.key ?? "elsewhere"),
    };
    const rows: ParentRow[] = [];
    if (parents.length > 0) {
      for (const r of rowPicks) {
        const p = parents[r.parent % parents.length]!;
        const row: ParentRow = { taskKey: p.key, mapIndex: p.mapped ? r.index : null };
        if (!r.missingField) row.resultJson = r.text;
        rows.push(row);
      }
    }
    return { task, mapIndex: task.mapOver ? mapIndex : null, rows };
  });

describe("KAIROS_INPUTS from the parents' stored texts", () => {
  it("is exactly JSON.stringify of the inputs built value by value", () => {
    fc.assert(
      fc.property(caseArb, ({ task, mapIndex, rows }) => {
        expect(inputsJsonOf(task, mapIndex, rows)).toBe(JSON.stringify(inputsByValue(task, mapIndex, rows)));
      }),
      { numRuns: 2000 },
    );
  });

  it("gives a mapped instance its item from an unmapped parent's list, from a mapped parent's instances, or null", () => {
    const list: InputsTask = { dependsOn: ["list", "cfg"], mapped: new Set(), mapOver: "list" };
    const rows: ParentRow[] = [
      { taskKey: "list", mapIndex: null, resultJson: `[{"a":"x,]}"},[1,[2]],"q\\"",null]` },
      { taskKey: "cfg", mapIndex: null, resultJson: null },
    ];
    const at = (i: number) => JSON.parse(inputsJsonOf(list, i, rows)) as Record<string, unknown>;
    expect(at(0)).toEqual({ list: [{ a: "x,]}" }, [1, [2]], 'q"', null], cfg: null, item: { a: "x,]}" }, index: 0 });
    expect(at(2).item).toBe('q"');
    expect(at(3).item).toBeNull();
    expect(at(9)).toMatchObject({ item: null, index: 9 });
    expect(JSON.parse(inputsJsonOf(list, 1, [{ taskKey: "list", mapIndex: null, resultJson: `{"not":"a list"}` }]))).toEqual({ list: { not: "a list" }, cfg: null, item: null, index: 1 });

    const mapped: InputsTask = { dependsOn: ["sq"], mapped: new Set(["sq"]), mapOver: "sq" };
    const inst: ParentRow[] = [
      { taskKey: "sq", mapIndex: 2, resultJson: `4` },
      { taskKey: "sq", mapIndex: 0, resultJson: `0` },
    ];
    expect(inputsJsonOf(mapped, 1, inst)).toBe(`{"sq":[0,null,4],"item":null,"index":1}`);
    expect(inputsJsonOf(mapped, 2, inst)).toBe(`{"sq":[0,null,4],"item":4,"index":2}`);
  });

  it("builds shapes Kairos never stores value by value (a parent named like an array index, a mapped parent's run without an index)", () => {
    const odd: InputsTask = { dependsOn: ["7", "m"], mapped: new Set(["m"]), mapOver: null };
    const rows: ParentRow[] = [
      { taskKey: "m", mapIndex: 1, resultJson: `1` },
      { taskKey: "7", mapIndex: null, resultJson: `"seven"` },
      { taskKey: "m", mapIndex: null, resultJson: `"whole"` },
    ];
    expect(inputsJsonOf(odd, null, rows)).toBe(JSON.stringify(inputsByValue(odd, null, rows)));
    expect(inputsJsonOf(odd, null, rows)).toBe(`{"7":"seven","m":"whole"}`);
  });

  it("refuses parents' results over the inputs limit before building anything", () => {
    const big = `"${"x".repeat(60 * 1024)}"`;
    const task: InputsTask = { dependsOn: ["c"], mapped: new Set(["c"]), mapOver: null };
    const rows: ParentRow[] = Array.from({ length: Math.ceil(MAX_INPUTS_BYTES / big.length) + 1 }, (_, i) => ({ taskKey: "c", mapIndex: i, resultJson: big }));
    expect(() => inputsJsonOf(task, null, rows)).toThrow(/bytes of KAIROS_INPUTS; at most 16777216/);
  });
});

describe("elementStarts", () => {
  it("finds every element of an array as JSON.stringify writes it, and nothing in anything else", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
        const text = JSON.stringify(v);
        const starts = elementStarts(text);
        if (!Array.isArray(v)) {
          expect(starts).toBeNull();
          return;
        }
        expect(starts!.length).toBe(v.length);
        const slices = [...starts!].map((s, i) => text.slice(s, i + 1 < starts!.length ? starts![i + 1]! - 1 : text.length - 1));
        expect(slices).toEqual(v.map((x) => JSON.stringify(x)));
      }),
      { numRuns: 2000 },
    );
  });
});
