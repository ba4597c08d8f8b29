/**
 * Parsed updates reused by shape (src/update/parse.ts): an update of a shape seen before gets its
 * own values in the known order, shapes that fail keep failing, and `$rename` is parsed afresh.
 */
import { describe, expect, it } from "vitest";
import { CommandError } from "../src/errors.js";
import { parseUpdate, type ParsedUpdate } from "../src/update/parse.js";

function entries(p: ParsedUpdate): Array<[string, string, unknown]> {
  if (p.kind !== "ops") throw new Error(`not an operator update: ${p.kind}`);
  return p.entries.map((e) => [e.op, e.path, e.arg]);
}

describe("parseUpdate by shape", () => {
  it("gives each update of one shape its own values, in path order", () => {
    const shape = (n: number) => ({ $set: { z: n, "a.b": `v${n}`, m: [n] }, $inc: { c: n }, $push: { h: { $each: [n], $slice: -2 } } });
    for (let n = 0; n < 5; n++) {
      expect(entries(parseUpdate(shape(n)))).toEqual([
        ["$set", "a.b", `v${n}`],
        ["$inc", "c", n],
        ["$push", "h", { $each: [n], $slice: -2 }],
        ["$set", "m", [n]],
        ["$set", "z", n],
      ]);
    }
    const p = parseUpdate(shape(9));
    expect(p.kind === "ops" && [...p.topFields]).toEqual(["a", "c", "h", "m", "z"]);
  });

  it("tells shapes apart by operator, path and path order", () => {
    expect(entries(parseUpdate({ $set: { a: 1, b: 2 } }))).toEqual([
      ["$set", "a", 1],
      ["$set", "b", 2],
    ]);
    expect(entries(parseUpdate({ $set: { b: 2, a: 1 } }))).toEqual([
      ["$set", "a", 1],
      ["$set", "b", 2],
    ]);
    expect(entries(parseUpdate({ $set: { a: 1 }, $inc: { b: 2 } }))).toEqual([
      ["$set", "a", 1],
      ["$inc", "b", 2],
    ]);
    expect(entries(parseUpdate({ $set: { "a,b": 1 } }))).toEqual([["$set", "a,b", 1]]);
    expect(entries(parseUpdate({ $set: { a: 1, b: 1 } }))).not.toEqual(entries(parseUpdate({ $set: { "a\u0000b": 1 } })));
  });

  it("keeps refusing a shape that failed, and a bad operand of a known shape", () => {
    for (let i = 0; i < 2; i++) {
      expect(() => parseUpdate({ $set: { a: 1, "a.b": 2 } })).toThrow(/conflict/);
      expect(() => parseUpdate({ $sett: { a: 1 } })).toThrow(CommandError);
    }
    parseUpdate({ $set: { a: 1 } });
    expect(() => parseUpdate({ $set: 5 })).toThrow(/Modifiers operate on fields/);
  });

  it("parses $rename afresh (its values are paths)", () => {
    expect(entries(parseUpdate({ $rename: { a: "b" } }))).toEqual([["$rename", "a", "b"]]);
    expect(entries(parseUpdate({ $rename: { a: "c" } }))).toEqual([["$rename", "a", "c"]]);
    expect(() => parseUpdate({ $rename: { a: "a" } })).toThrow(/must differ/);
    expect(() => parseUpdate({ $rename: { a: "b" }, $set: { b: 1 } })).toThrow(/conflict/);
  });
});
