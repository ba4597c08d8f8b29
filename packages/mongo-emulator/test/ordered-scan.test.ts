/**
 * Index-ordered scans (src/ordered.ts, plan.ts orderedPlan): a sorted find with a limit walks an
 * index in its order and stops, and answers exactly what matching and sorting every candidate
 * answers. OrderedKeys against a plain sorted array under random changes; finds through the
 * driver against the same finds without a limit (which match and sort everything), before and
 * after the documents change; what the emulator examines; and a string `$regex` judged without
 * mingo, against mingo.
 */
import fc from "fast-check";
import { ObjectId, type Collection, type Document } from "mongodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeRec } from "../src/collection.js";
import { Index } from "../src/indexes.js";
import { compileFilter, mingoQuery, type Rec } from "../src/matcher.js";
import { OrderedKeys, type KeyRange } from "../src/ordered.js";
import { compareValues, toView, type Doc } from "../src/values.js";
import { docsExamined, EMULATOR_ONLY, ON_EMULATOR, openTarget, type Loose, type Target } from "./target.js";

describe("OrderedKeys", () => {
  const value = fc.oneof(
    fc.integer({ min: 0, max: 5 }),
    fc.constantFrom("a", "b", "B"),
    fc.integer({ min: 0, max: 5 }).map((n) => new Date(n * 1000)),
    fc.constant(null),
    fc.constant(undefined),
  );
  const key = fc.tuple(value, value);
  const op = fc.oneof(
    fc.record({ kind: fc.constant("put" as const), id: fc.integer({ min: 0, max: 60 }), key }),
    fc.record({ kind: fc.constant("delete" as const), id: fc.integer({ min: 0, max: 60 }) }),
  );
  const bound = fc.option(fc.record({ value: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 5 }).map((n) => new Date(n * 1000)), fc.constantFrom("a", "b")), inclusive: fc.boolean() }), { nil: undefined });

  it("scans what a sorted array holds, in index order or reversed, within a prefix and a range, under random changes", () => {
    fc.assert(
      fc.property(
        fc.tuple(fc.constantFrom(1, -1), fc.constantFrom(1, -1)),
        fc.array(op, { maxLength: 120 }),
        fc.array(fc.tuple(fc.option(value, { nil: null }), fc.boolean(), bound, bound), { minLength: 1, maxLength: 4 }),
        (dirs, ops, scans) => {
          const keys = new OrderedKeys(dirs as (1 | -1)[], [], 2); // tiny chunks: splits and empty chunks happen
          const model = new Map<string, unknown[]>();
          for (const o of ops) {
            const id = `id${String(o.id).padStart(2, "0")}`;
            if (o.kind === "put") {
              keys.insert(id, o.key);
              model.set(id, o.key);
            } else {
              keys.delete(id);
              model.delete(id);
            }
          }
          const cmp = (a: [string, unknown[]], b: [string, unknown[]]) => {
            for (let f = 0; f < 2; f++) {
              const c = compareValues(a[1][f], b[1][f]);
              if (c !== 0) return c * dirs[f]!;
            }
            return a[0] < b[0] ? -1 : 1;
          };
          const sorted = [...model.entries()].sort(cmp);
          expect(keys.size).toBe(model.size);
          for (const [first, reverse, low, high] of scans) {
            const prefix = first === null ? [] : [first];
            const range: KeyRange = { low, high };
            const f = prefix.length; // the ranged field
            const inRange = (v: unknown) =>
              (!low || (low.inclusive ? compareValues(v, low.value) >= 0 : compareValues(v, low.value) > 0)) &&
              (!high || (high.inclusive ? compareValues(v, high.value) <= 0 : compareValues(v, high.value) < 0));
            const want = sorted.filter(([, k]) => (prefix.length === 0 || compareValues(k[0], prefix[0]) === 0) && inRange(k[f])).map(([id]) => id);
            if (reverse) want.reverse();
            expect([...keys.scan(prefix, reverse, range)]).toEqual(want);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("Index, once walked in order", () => {
  it("keeps its ordered keys in step with adds, moves and removals, and stops ordering once multikey", () => {
    const ix = new Index({ v: 2, key: { o: 1, t: -1, _id: -1 }, name: "o_t" });
    const docs = new Map<string, Rec>();
    const put = (d: Doc) => {
      const rec = makeRec(d);
      if (docs.has(rec.id)) ix.remove(rec.id);
      docs.set(rec.id, rec);
      ix.add(rec.id, ix.entryFor(rec), rec.doc);
      return rec.id;
    };
    const drop = (id: string) => {
      docs.delete(id);
      ix.remove(id);
    };
    const walk = () => [...ix.ordered(docs)!.scan(["a"], false)].map((id) => docs.get(id)!.doc._id);
    for (let i = 0; i < 10; i++) put({ _id: i, o: i % 2 ? "a" : "b", t: i });
    expect(walk()).toEqual([9, 7, 5, 3, 1]);
    const moved = put({ _id: 3, o: "a", t: 100 });
    put({ _id: 4, o: "a", t: 4 });
    put({ _id: 7, o: "b", t: 7 });
    drop(makeRec({ _id: 9 }).id);
    expect(walk()).toEqual([3, 5, 4, 1]);
    expect(ix.ordered(docs)!.size).toBe(ix.count([]));
    expect(moved).toBe(makeRec({ _id: 3 }).id);
    put({ _id: 20, o: "a", t: [1, 2] });
    expect(ix.ordered(docs)).toBeNull();
  });
});

describe("Index hash levels", () => {
  it("are built when first probed, from what was added before, and kept in step after", () => {
    const ix = new Index({ v: 2, key: { o: 1, s: 1 }, name: "o_s" });
    const recs = new Map<number, Rec>();
    const put = (n: number, o: string, st: string) => {
      const old = recs.get(n);
      if (old) ix.remove(old.id);
      const rec = makeRec({ _id: n, o, s: st });
      recs.set(n, rec);
      ix.add(rec.id, ix.entryFor(rec), rec.doc);
    };
    const ids = (values: unknown[]) => [...ix.lookup(values)].map((id) => [...recs.values()].find((r) => r.id === id)!.doc._id).sort();
    for (let n = 0; n < 6; n++) put(n, n % 2 ? "a" : "b", n % 3 ? "x" : "y");
    expect(ids(["a", "x"])).toEqual([1, 5]); // level 1 built here
    expect(ix.count(["a", "x"])).toBe(2);
    put(5, "b", "x");
    put(7, "a", "x");
    ix.remove(recs.get(1)!.id);
    expect(ids(["a", "x"])).toEqual([7]);
    expect(ids(["b"])).toEqual([0, 2, 4, 5]); // level 0 built after those changes
    put(2, "a", "y");
    expect(ids(["b"])).toEqual([0, 4, 5]);
    expect(ix.count(["a"])).toBe(3);
  });
});

describe("a string $regex without mingo", () => {
  const text = fc.string({ unit: fc.constantFrom("a", "B", ".", "*", "\n", "x"), maxLength: 4 });
  const field = fc.oneof(text, fc.array(fc.oneof(text, fc.array(text, { maxLength: 2 }), fc.integer()), { maxLength: 3 }), fc.integer(), fc.constant(null), fc.constant(undefined));
  const pattern = fc.oneof(text, fc.constantFrom("^a", "a$", "a.b", "(", "\\.", "[ab]+", "^$"));
  it("matches what mingo matches, on strings, arrays (nested once), other values and bad patterns", () => {
    fc.assert(
      // Not "g": a stateful flag (MongoDB refuses it), with which mingo's cached query answers differently each time.
      fc.property(field, pattern, fc.constantFrom("", "i", "m", "s", "im", "x"), (v, re, options) => {
        const doc: Doc = v === undefined ? { _id: 1 } : { _id: 1, f: v };
        const filter = { f: { $regex: re, $options: options } };
        let want: boolean | "error";
        try {
          want = mingoQuery(toView(filter)).test(toView(doc));
        } catch {
          want = "error";
        }
        let got: boolean | "error";
        try {
          got = compileFilter(filter).test(makeRec(doc));
        } catch {
          got = "error";
        }
        expect(got).toBe(want);
      }),
      { numRuns: 1000 },
    );
  });
});

let t: Target;
let seq = 0;
const coll = (): Collection<Loose> => t.db.collection<Loose>(`ordered${++seq}`);

beforeAll(async () => {
  t = await openTarget("ordered");
});
afterAll(async () => {
  await t?.close();
});

/** The ids a find answers. */
async function ids(c: Collection<Loose>, filter: Document, sort: Document, skip: number, limit: number): Promise<string[]> {
  return (await c.find(filter).sort(sort).skip(skip).limit(limit).toArray()).map((d) => String(d._id));
}

describe("finds through an index in its order", () => {
  it("answer what matching and sorting every candidate answers, while documents are inserted, changed and removed", async () => {
    const c = coll();
    await c.createIndex({ o: 1, t: -1, _id: -1 }, { name: "o_t" });
    await c.createIndex({ t: -1, _id: -1 }, { name: "t" });
    await c.createIndex({ o: 1, s: 1, t: -1, _id: -1 }, { name: "o_s_t" });
    await c.createIndex({ n: 1, t: -1, _id: -1 }, { name: "n_t", partialFilterExpression: { n: { $type: "string" } } });
    let i = 0;
    const doc = (): Loose => {
      i++;
      return {
        _id: new ObjectId(),
        o: `o${i % 3}`,
        s: ["A", "B"][i % 2],
        // mostly dates, some equal, some missing, null or a number: MongoDB's order across types
        ...(i % 11 === 0 ? {} : { t: i % 13 === 0 ? null : i % 17 === 0 ? i : new Date(1_000 * (i % 40)) }),
        ...(i % 5 === 0 ? { n: `n${i % 2}` } : i % 7 === 0 ? { n: 3 } : {}),
        name: `Job ${i % 9}`,
      };
    };
    await c.insertMany(Array.from({ length: 300 }, doc));
    const w = { low: new Date(5_000), high: new Date(25_000) };
    const filters: Document[] = [
      {},
      { o: "o1" },
      { o: "o2", s: "B" },
      { o: "o0", t: { $gte: w.low, $lt: w.high } },
      { t: { $gt: w.low } },
      { t: { $lte: w.high }, $and: [{ t: { $gt: new Date(2_000) } }] },
      { o: "o1", name: { $regex: "job 3", $options: "i" } },
      { n: "n1" },
      { n: 3 },
      { o: "o1", $or: [{ t: { $lt: w.high } }, { t: w.high, _id: { $lt: new ObjectId("ffffffffffffffffffffffff") } }], t: { $lte: w.high } },
      { o: "nobody" },
    ];
    const check = async () => {
      for (const f of filters) {
        for (const sort of [{ t: -1, _id: -1 }, { t: 1, _id: 1 }]) {
          const all = await ids(c, f, sort, 0, 0); // no limit: matched and sorted whole
          for (const [skip, limit] of [[0, 1], [0, 7], [3, 5], [0, 1000]] as const) {
            expect(await ids(c, f, sort, skip, limit), `${JSON.stringify(f)} ${JSON.stringify(sort)} skip ${skip} limit ${limit}`).toEqual(all.slice(skip, skip + limit));
          }
        }
      }
    };
    await check();
    // Changed once the ordered keys exist: inserts, moves in the order, moves between prefixes, removals.
    await c.insertMany(Array.from({ length: 50 }, doc));
    await c.updateMany({ s: "A", o: "o1" }, { $set: { t: new Date(7_000) } });
    await c.updateMany({ o: "o2", s: "B" }, { $set: { o: "o0" } });
    await c.updateMany({ n: "n0" }, { $unset: { n: "" } });
    await c.deleteMany({ s: "B", o: "o0", t: { $lt: new Date(20_000) } });
    await check();
    // An array on an indexed path (multikey): that index is no longer walked in order; answers stay the same.
    await c.insertOne({ _id: new ObjectId(), o: "o1", s: "A", t: [new Date(1_000), new Date(39_000)], name: "Job 3" });
    await check();
  });

  it.skipIf(!ON_EMULATOR)(`read only what the page needs, and say which index in explain ${EMULATOR_ONLY}`, async () => {
    const c = coll();
    await c.createIndex({ o: 1, t: -1, _id: -1 }, { name: "o_t" });
    await c.createIndex({ d: 1 }, { name: "d" });
    const docs = Array.from({ length: 10_000 }, (_, i) => ({ _id: new ObjectId(), o: `o${i % 4}`, t: new Date(i * 1000), d: i % 1000, name: `Job ${i % 50}` }));
    await c.insertMany(docs);
    const examined = async (fn: () => Promise<unknown>) => {
      const before = await docsExamined(t.client);
      await fn();
      return (await docsExamined(t.client)) - before;
    };
    const newest = { t: -1, _id: -1 } as const;
    expect(await examined(() => c.find({ o: "o1" }).sort(newest).limit(11).toArray())).toBe(11);
    expect(await examined(() => c.find({ o: "o1" }).sort({ t: 1, _id: 1 }).limit(11).toArray())).toBe(11);
    // A window far back: the walk starts at it and stops after it.
    const window = { o: "o1", t: { $gte: new Date(2_000_000), $lt: new Date(2_040_000) } };
    expect(await ids(c, window, newest, 0, 100)).toHaveLength(10);
    expect(await examined(() => c.find(window).sort(newest).limit(100).toArray())).toBe(10);
    // A cursor's page: the bound its $or implies lets the walk start right after the page before.
    const end = docs.filter((d) => d.o === "o1").at(-500)!;
    const after = { o: "o1", t: { $lte: end.t }, $or: [{ t: { $lt: end.t } }, { t: end.t, _id: { $lt: end._id } }] };
    expect(await examined(() => c.find(after).sort(newest).limit(11).toArray())).toBeLessThanOrEqual(12);
    // A condition the index does not cover: read in order until the page is full.
    expect(await examined(() => c.find({ o: "o1", name: { $regex: "job 4", $options: "i" } }).sort(newest).limit(5).toArray())).toBeLessThanOrEqual(5 * 25 + 25);
    // Another index pins fewer documents ({d} holds 10, o_t 2,500): equality on it, then a sort of those few.
    expect(await examined(() => c.find({ o: "o1", d: 5 }).sort(newest).limit(11).toArray())).toBe(10);
    const plan = async (f: Document, limit: number) => (await c.find(f).sort(newest).limit(limit).explain("executionStats")).queryPlanner.winningPlan.inputStage;
    expect(await plan({ o: "o1" }, 11)).toEqual({ stage: "IXSCAN", indexName: "o_t" });
    expect(await plan({ o: "o1", d: 5 }, 11)).toEqual({ stage: "IXSCAN", indexName: "d" });
  });
});
