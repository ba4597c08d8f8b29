/**
 * Candidate selection ("query planning", in miniature). Equality conditions on `_id` go straight
 * to the primary map; equality (or `$in`) on the leading field(s) of a secondary index goes
 * through that index's hash maps; anything else scans the collection in insertion order. A
 * sorted find with a limit may instead walk an index in its order (orderedPlan) and stop at the
 * limit. Candidates are always re-checked against the full filter, so an index can only narrow
 * the work, never change the result.
 */
import type { Collection } from "./collection.js";
import type { Index } from "./indexes.js";
import { compileFilter, conjuncts, equalityConstraints, isFastScalar, type Matcher, type Rec } from "./matcher.js";
import type { KeyRange } from "./ordered.js";
import { canonKey, compareValues, isPlainObject, type Doc } from "./values.js";

/** Upper bound on the key combinations probed for `$in` lists over compound indexes. */
const MAX_PROBES = 1000;

export interface Stats {
  docsExamined: number;
}

export interface PlanInfo {
  /** "IDHACK", "IXSCAN <name>" or "COLLSCAN". */
  stage: string;
}

function product(lists: unknown[][]): unknown[][] {
  let out: unknown[][] = [[]];
  for (const list of lists) {
    const next: unknown[][] = [];
    for (const prefix of out) for (const v of list) next.push([...prefix, v]);
    out = next;
  }
  return out;
}

/**
 * The secondary index whose equality probes narrow the candidates most: the most leading fields
 * pinned, then the fewest documents under the probes (counted from the hash maps, without
 * reading them), so `{ownerId, dagRunId}` reads a DAG run's few runs, not all of the owner's.
 */
function chooseIndex(coll: Collection, eq: Map<string, unknown[]>): { ix: Index; probes: unknown[][]; count: number } | null {
  let best: { ix: Index; n: number; probes: unknown[][]; count: number } | null = null;
  for (const ix of coll.indexes) {
    let n = 0;
    while (n < ix.fields.length && eq.has(ix.fields[n])) n++;
    if (n === 0) continue;
    let lists = ix.fields.slice(0, n).map((f) => eq.get(f)!);
    while (n > 1 && lists.reduce((p, l) => p * l.length, 1) > MAX_PROBES) lists = lists.slice(0, --n);
    if (lists.reduce((p, l) => p * l.length, 1) > MAX_PROBES) continue;
    if (!lists.every((l) => ix.canAnswerEquality(l)) || !ix.impliedBy(eq)) continue;
    if (best && n < best.n) continue;
    const probes = product(lists);
    let count = 0;
    for (const probe of probes) count += ix.count(probe);
    if (!best || n > best.n || count < best.count) best = { ix, n, probes, count };
  }
  return best;
}

/** The documents worth testing against a filter, and how they were found. */
export function candidates(coll: Collection, filter: Doc | null | undefined): { recs: Iterable<Rec>; plan: PlanInfo } {
  const eq = equalityConstraints(filter);
  const ids = eq.get("_id");
  if (ids) {
    const recs: Rec[] = [];
    const seen = new Set<string>();
    for (const v of ids) {
      const key = canonKey(v);
      if (seen.has(key)) continue;
      seen.add(key);
      const rec = coll.docs.get(key);
      if (rec) recs.push(rec);
    }
    return { recs, plan: { stage: "IDHACK" } };
  }
  const choice = chooseIndex(coll, eq);
  if (choice) {
    const recs: Rec[] = [];
    if (choice.probes.length === 1) {
      // One probe: its ids are distinct already.
      for (const id of choice.ix.lookup(choice.probes[0])) {
        const rec = coll.docs.get(id);
        if (rec) recs.push(rec);
      }
    } else {
      const idSet = new Set<string>();
      for (const probe of choice.probes) for (const id of choice.ix.lookup(probe)) idSet.add(id);
      for (const id of idSet) {
        const rec = coll.docs.get(id);
        if (rec) recs.push(rec);
      }
    }
    return { recs, plan: { stage: `IXSCAN ${choice.ix.name}` } };
  }
  return { recs: coll.docs.values(), plan: { stage: "COLLSCAN" } };
}

/** Past this many candidates an equality plan reads and sorts, an ordered scan is used even where its range is larger. */
const SORT_CANDIDATES_MAX = 10_000;

/** An index-ordered scan: the index, the equality prefix it is walked within, and the direction. */
export interface OrderedPlan {
  ix: Index;
  prefix: unknown[];
  reverse: boolean;
  /** Bounds the filter puts on the first sorted field: the walk starts and stops at them. */
  range: KeyRange;
  /** "IXSCAN <name>", as explain reports it. */
  stage: string;
}

/**
 * An index that hands out the documents `filter` may match already in `sort` order, so a find
 * with a limit reads them in order and stops at it; null when none does or it would not pay.
 * An index qualifies when equality conditions (one value each) pin its leading fields and the
 * sort is exactly its other fields, all in its directions or all reversed, ending with `_id`
 * (so no two documents tie, and the order is the one a sort gives). Among those, the one whose
 * pinned range holds the fewest documents; it is used when that range is no larger than what the
 * equality plan would read and sort, or when that is more than SORT_CANDIDATES_MAX documents.
 */
export function orderedPlan(coll: Collection, filter: Doc | null | undefined, sort: ReadonlyArray<{ path: string; dir: 1 | -1 }>): OrderedPlan | null {
  if (sort.length === 0 || sort[sort.length - 1].path !== "_id") return null;
  const eq = equalityConstraints(filter);
  if (eq.has("_id")) return null;
  let best: { ix: Index; prefix: unknown[]; reverse: boolean; size: number } | null = null;
  for (const ix of coll.indexes) {
    const dirs = ix.dirs;
    if (dirs === null || !ix.impliedBy(eq)) continue;
    const n = ix.fields.length - sort.length;
    if (n < 0) continue;
    const prefix: unknown[] = [];
    for (let f = 0; f < n; f++) {
      const values = eq.get(ix.fields[f]);
      if (values?.length !== 1 || !ix.canAnswerEquality(values)) break;
      prefix.push(values[0]);
    }
    if (prefix.length !== n) continue;
    const flip = sort[0].dir * dirs[n];
    if (!sort.every((s, k) => s.path === ix.fields[n + k] && s.dir * dirs[n + k] === flip)) continue;
    const size = ix.count(prefix);
    if (!best || size < best.size) best = { ix, prefix, reverse: flip === -1, size };
  }
  if (!best) return null;
  const reads = chooseIndex(coll, eq)?.count ?? coll.docs.size;
  if (best.size > reads && reads <= SORT_CANDIDATES_MAX) return null;
  if (!best.ix.ordered(coll.docs)) return null;
  const range = rangeOf(filter, best.ix.fields[best.prefix.length]);
  return { ix: best.ix, prefix: best.prefix, reverse: best.reverse, range, stage: `IXSCAN ${best.ix.name}` };
}

/**
 * The tightest bounds the filter's top-level conditions ($gt, $gte, $lt, $lte with a scalar) put
 * on `field`. Every matching document's value lies within them (a comparison matches only values
 * of its own type, which MongoDB's order keeps together), so a walk may start and stop there.
 */
export function rangeOf(filter: Doc | null | undefined, field: string): KeyRange {
  const range: KeyRange = {};
  if (!filter) return range;
  const parts: [string, unknown][] = [];
  conjuncts(filter, parts);
  for (const [f, cond] of parts) {
    if (f !== field || !isPlainObject(cond)) continue;
    for (const [op, value] of Object.entries(cond)) {
      if (!isFastScalar(value)) continue;
      if (op === "$gt" || op === "$gte") {
        const inclusive = op === "$gte";
        const c = range.low ? compareValues(value, range.low.value) : 1;
        if (c > 0 || (c === 0 && !inclusive)) range.low = { value, inclusive };
      } else if (op === "$lt" || op === "$lte") {
        const inclusive = op === "$lte";
        const c = range.high ? compareValues(value, range.high.value) : -1;
        if (c < 0 || (c === 0 && !inclusive)) range.high = { value, inclusive };
      }
    }
  }
  return range;
}

/**
 * The first `limit` documents matching `filter` in the order of `plan` (see orderedPlan),
 * counting every document read in `stats.docsExamined`.
 */
export function findOrdered(coll: Collection, plan: OrderedPlan, filter: Doc | null | undefined, stats: Stats, limit: number): Rec[] {
  const m = compileFilter(filter);
  const keys = plan.ix.ordered(coll.docs)!;
  const out: Rec[] = [];
  for (const id of keys.scan(plan.prefix, plan.reverse, plan.range)) {
    const rec = coll.docs.get(id);
    if (!rec) continue;
    stats.docsExamined++;
    if (!m.test(rec)) continue;
    out.push(rec);
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * Matching documents in plan order, stopping after `limit` (0 = no limit). Counts every
 * document tested in `stats.docsExamined`. The result is an array, so callers may mutate the
 * collection while walking it.
 */
export function findMatching(coll: Collection, filter: Doc | null | undefined, stats: Stats, limit = 0, matcher?: Matcher): Rec[] {
  const m = matcher ?? compileFilter(filter);
  const out: Rec[] = [];
  const { recs } = candidates(coll, filter);
  for (const rec of recs) {
    stats.docsExamined++;
    if (!m.test(rec)) continue;
    out.push(rec);
    if (limit > 0 && out.length >= limit) break;
  }
  return out;
}
