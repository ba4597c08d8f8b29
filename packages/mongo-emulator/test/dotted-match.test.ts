/**
 * Dotted paths judged without mingo (matcher.ts pathValue) give mingo's answers: random documents
 * holding arrays (of documents with numeric field names, of arrays, of scalars), random updates
 * through them (which share what they do not touch with the document before, update/index.ts
 * copyForUpdate), random filters, each compared with mingo's reading of the same document.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeRec } from "../src/collection.js";
import { compileFilter, mingoQuery } from "../src/matcher.js";
import { applyUpdate, copyForUpdate, parseUpdate } from "../src/update/index.js";
import { toView, type Doc } from "../src/values.js";

const ctx = { filter: null, arrayFilters: new Map(), inserting: false, now: new Date(0) };
const KEYS = ["s", "a", "0", "1", "2"] as const;
const scalar = fc.oneof(fc.constantFrom("Q", "OK"), fc.integer({ min: 0, max: 2 }), fc.constant(null));
const element: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.dictionary(fc.constantFrom(...KEYS), scalar, { maxKeys: 3 }).map((d) => ({ ...d })) },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 2 }) },
  { weight: 1, arbitrary: scalar },
);
const doc = fc.record({ _id: fc.constant(1), t: fc.record({ list: fc.array(element, { maxLength: 4 }), n: fc.integer({ min: 0, max: 3 }) }) });
const index = fc.constantFrom("0", "1", "2", "3");
const path = fc.tuple(index, fc.option(fc.constantFrom(...KEYS), { nil: null })).map(([i, k]) => `t.list.${i}${k === null ? "" : `.${k}`}`);
const update = fc.oneof(
  fc.tuple(path, scalar).map(([p, v]) => ({ $set: { [p]: v } })),
  fc.tuple(index, element).map(([i, v]) => ({ $set: { [`t.list.${i}`]: v } })),
  fc.tuple(index, fc.constantFrom(...KEYS)).map(([i, k]) => ({ $unset: { [`t.list.${i}.${k}`]: "" } })),
  element.map((v) => ({ $push: { "t.list": v } })),
  fc.constant({ $inc: { "t.n": 1 } }),
);
const filter = fc.oneof(
  fc.tuple(path, scalar).map(([p, v]) => ({ [p]: v })),
  fc.tuple(path, fc.array(scalar, { minLength: 1, maxLength: 2 })).map(([p, v]) => ({ [p]: { $in: v } })),
  fc.tuple(path, scalar).map(([p, v]) => ({ [p]: { $ne: v } })),
  fc.tuple(path, fc.boolean()).map(([p, v]) => ({ [p]: { $exists: v } })),
  fc.tuple(path, fc.integer({ min: 0, max: 2 })).map(([p, v]) => ({ [p]: { $gt: v }, "t.n": { $gte: 0 } })),
);

function agree(d: Doc, f: Doc): void {
  expect(compileFilter(f).test(makeRec(d)), JSON.stringify({ d, f })).toBe(mingoQuery(toView(f)).test(toView(d)));
}

describe("dotted paths without mingo", () => {
  it("match as mingo does, before and after updates through the arrays", () => {
    fc.assert(
      fc.property(doc, fc.array(update, { maxLength: 4 }), fc.array(filter, { minLength: 1, maxLength: 4 }), (start, updates, filters) => {
        let cur: Doc = start;
        for (const f of filters) agree(cur, f);
        for (const u of updates) {
          const parsed = parseUpdate(u);
          let next: Doc;
          try {
            next = applyUpdate(copyForUpdate(cur, parsed), parsed, ctx).doc;
          } catch {
            continue; // a path MongoDB refuses (e.g. a field of a scalar element): nothing changed
          }
          cur = next;
          for (const f of filters) agree(cur, f);
        }
      }),
      { numRuns: 3_000 },
    );
  });
});
