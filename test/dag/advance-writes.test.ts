/** What an advance writes of a changed task (src/dag/engine/task-states.ts taskWrites): applied to what was stored, exactly the new entry. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { taskWrites } from "../../src/dag/engine/task-states.js";
import type { DagRunTaskDoc } from "../../src/domain/index.js";

const STATES = ["PENDING", "QUEUED", "RUNNING", "RETRYING", "SUCCEEDED", "FAILED", "UPSTREAM_FAILED", "SKIPPED", "CANCELLED"] as const;

/** `$set` semantics for the paths taskWrites uses (`tasks.<key>[.<field>|.instances.<i>]`). */
function apply(stored: Record<string, DagRunTaskDoc>, writes: Array<[string, unknown]>): Record<string, DagRunTaskDoc> {
  const out = structuredClone(stored) as Record<string, any>;
  for (const [path, value] of writes) {
    const parts = path.split(".").slice(1);
    let cur = out;
    for (const p of parts.slice(0, -1)) cur = cur[p];
    cur[parts.at(-1)!] = structuredClone(value);
  }
  return out;
}

const instance = fc.record({ state: fc.constantFrom(...STATES), attempt: fc.integer({ min: 1, max: 3 }) });
const task = (n: number | null) =>
  fc.record({
    state: fc.constantFrom(...STATES),
    attempt: fc.integer({ min: 1, max: 3 }),
    note: fc.option(fc.string({ maxLength: 5 }), { nil: null }),
    openParents: fc.integer({ min: 0, max: 3 }),
    ...(n === null ? {} : { instances: fc.array(instance, { minLength: n, maxLength: n }), open: fc.integer({ min: 0, max: n }) }),
  }) as fc.Arbitrary<DagRunTaskDoc>;

describe("taskWrites", () => {
  it("writes a mapped task's changed instances one by one, and turns the stored entry into the new one", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 6 }).chain((n) => fc.tuple(task(n), task(n))),
        ([before, after]) => {
          const writes = taskWrites("m", after, before);
          expect(apply({ m: before }, writes)).toEqual({ m: after });
          // Never the whole instance list when it was stored with as many instances.
          expect(writes.some(([p]) => p === "tasks.m")).toBe(false);
        },
      ),
    );
  });

  it("writes the whole entry when the instances appear, change in number, or the task is not mapped", () => {
    fc.assert(
      fc.property(fc.option(task(2), { nil: undefined }), fc.oneof(task(null), task(3)), (before, after) => {
        const writes = taskWrites("t", after, before);
        expect(writes).toEqual([["tasks.t", after]]);
        expect(apply(before ? { t: before } : {}, writes)).toEqual({ t: after });
      }),
    );
  });
});
