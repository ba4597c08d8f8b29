/**
 * Candidate selection ("query planning", in miniature). Equality conditions on `_id` go straight
 * to the primary map; equality (or `$in`) on the leading field(s) of a secondary index goes
 * through that index's hash maps; anything else scans the collection in insertion order.
 * Candidates are always re-checked against the full filter, so an index can only narrow the
 * work, never change the result.
 */
import type { Collection } from "./collection.js";
import type { Index } from "./indexes.js";
import { compileFilter, equalityConstraints, type Matcher, type Rec } from "./matcher.js";
import { canonKey, type Doc } from "./values.js";

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

function chooseIndex(coll: Collection, eq: Map<string, unknown[]>): { ix: Index; probes: unknown[][] } | null {
  let best: { ix: Index; n: number; probes: unknown[][] } | null = null;
  for (const ix of coll.indexes) {
    let n = 0;
    while (n < ix.fields.length && eq.has(ix.fields[n])) n++;
    if (n === 0) continue;
    let lists = ix.fields.slice(0, n).map((f) => eq.get(f)!);
    while (n > 1 && lists.reduce((p, l) => p * l.length, 1) > MAX_PROBES) lists = lists.slice(0, --n);
    if (lists.reduce((p, l) => p * l.length, 1) > MAX_PROBES) continue;
    if (!lists.every((l) => ix.canAnswerEquality(l)) || !ix.impliedBy(eq)) continue;
    const better =
      !best ||
      n > best.n ||
      (n === best.n && ix.unique && n === ix.fields.length && !(best.ix.unique && best.n === best.ix.fields.length));
    if (better) best = { ix, n, probes: product(lists) };
  }
  return best && { ix: best.ix, probes: best.probes };
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
    const idSet = new Set<string>();
    for (const probe of choice.probes) {
      const hit = choice.ix.lookup(probe);
      if (hit) for (const id of hit) idSet.add(id);
    }
    const recs: Rec[] = [];
    for (const id of idSet) {
      const rec = coll.docs.get(id);
      if (rec) recs.push(rec);
    }
    return { recs, plan: { stage: `IXSCAN ${choice.ix.name}` } };
  }
  return { recs: coll.docs.values(), plan: { stage: "COLLSCAN" } };
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
