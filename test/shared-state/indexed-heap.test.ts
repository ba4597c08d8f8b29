import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IndexedHeap } from "../../src/shared-state/memory/indexed-heap.js";

describe("IndexedHeap", () => {
  it("behaves like a sorted map of (score, key) under random set/delete/pop", () => {
    const key = fc.constantFrom("a", "b", "c", "d", "e", "f", "g");
    const op = fc.oneof(
      fc.record({ kind: fc.constant("set" as const), key, score: fc.integer({ min: -5, max: 5 }) }),
      fc.record({ kind: fc.constant("delete" as const), key }),
      fc.record({ kind: fc.constant("pop" as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const heap = new IndexedHeap();
        const model = new Map<string, number>();
        const min = () => [...model].sort(([ka, a], [kb, b]) => a - b || (ka < kb ? -1 : 1))[0];
        for (const o of ops) {
          if (o.kind === "set") {
            heap.set(o.key, o.score);
            model.set(o.key, o.score);
          } else if (o.kind === "delete") {
            expect(heap.delete(o.key)).toBe(model.delete(o.key));
          } else {
            const m = min();
            expect(heap.pop()).toEqual(m ? { key: m[0], score: m[1] } : undefined);
            if (m) model.delete(m[0]);
          }
          expect(heap.size).toBe(model.size);
          const m = min();
          expect(heap.peek()).toEqual(m ? { key: m[0], score: m[1] } : undefined);
          for (const [k, v] of model) expect(heap.score(k)).toBe(v);
        }
      }),
      { numRuns: 300 },
    );
  });
});
