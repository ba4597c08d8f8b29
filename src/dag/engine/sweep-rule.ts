/**
 * The sweeper's rule, as pure functions (sweeper.ts reads and writes around them): which DAG runs
 * due for a look get a full round (their states and every task run read, `step`), when the others
 * are looked at again, and whether a pass takes another batch.
 *
 * A due DAG run gets a full round if it moved since its last full sweep (or, never swept, since it
 * was created), less the clocks' skew: it was written, or one of its task runs ended (the second
 * needs a query, asked only for the ones the first test left quiet); or if its last full round was
 * `idleFullEveryMs` ago or more. The others are idle: looked at again after `sweepAfterMs`, or,
 * once nothing wrote them for LONG_IDLE_MS, after IDLE_LOOK_EVERY_MS (sweepAfterMs if longer).
 */
import type { DueDagRun } from "../../store/index.js";

/** How far back a task run's end counts as after a sweep, against clocks that differ between hosts. */
export const CLOCK_SKEW_MS = 10_000;
/** A DAG run nothing wrote for this long is looked at every IDLE_LOOK_EVERY_MS rather than every sweepAfterMs. */
export const LONG_IDLE_MS = 10 * 60_000;
export const IDLE_LOOK_EVERY_MS = 60_000;
/** A pass goes on taking due DAG runs, a batch at a time, for at most this long. */
export const PASS_BUDGET_MS = 500;

/** What the rule reads of a due DAG run. */
export type SweepCandidate = Pick<DueDagRun, "_id" | "sweptAt" | "createdAt" | "updatedAt">;

export interface SweepRuleOptions {
  /** When a swept DAG run is looked at again if nothing writes it meanwhile. */
  sweepAfterMs: number;
  /** A DAG run where nothing moved still gets a full round this often. */
  idleFullEveryMs: number;
}

/** The instant after which a write or a task run's end counts as a move: the last full round (or the creation), less the skew. */
export function movesCountAfter(d: SweepCandidate): number {
  return (d.sweptAt ?? d.createdAt).getTime() - CLOCK_SKEW_MS;
}

/** The due DAG runs split by what they tell themselves; `quiet` need their task runs' ends (since `endsSince`) to tell. */
export interface ByWrites<D extends SweepCandidate> {
  moved: D[];
  quiet: D[];
  /** The earliest instant a quiet one's task run end counts from (null: none quiet, no query). */
  endsSince: number | null;
}

/** First test: written since the last full round, or that round `idleFullEveryMs` ago or more. */
export function splitByWrites<D extends SweepCandidate>(due: readonly D[], now: number, opts: Pick<SweepRuleOptions, "idleFullEveryMs">): ByWrites<D> {
  const moved: D[] = [];
  const quiet: D[] = [];
  for (const d of due) {
    const last = (d.sweptAt ?? d.createdAt).getTime();
    if (now - last >= opts.idleFullEveryMs || d.updatedAt.getTime() > movesCountAfter(d)) moved.push(d);
    else quiet.push(d);
  }
  return { moved, quiet, endsSince: quiet.length === 0 ? null : Math.min(...quiet.map(movesCountAfter)) };
}

/** What a batch does: full rounds, in order, and the idle ones' next look. */
export interface SweepPlan<D extends SweepCandidate> {
  full: D[];
  /** Idle, written lately: looked at again at `soonAt`. */
  idleSoon: string[];
  soonAt: number;
  /** Idle, nothing wrote them for LONG_IDLE_MS: looked at again at `laterAt`. */
  idleLong: string[];
  laterAt: number;
}

/**
 * Second test, on the quiet ones: a task run ended since the last full round (`lastEnds`: the latest
 * end per DAG run, from the query since `endsSince`). Then when the idle ones are looked at again.
 */
export function planSweep<D extends SweepCandidate>(split: ByWrites<D>, lastEnds: ReadonlyMap<string, Date>, now: number, opts: SweepRuleOptions): SweepPlan<D> {
  const full = [...split.moved];
  const idle: D[] = [];
  for (const d of split.quiet) ((lastEnds.get(d._id)?.getTime() ?? -Infinity) > movesCountAfter(d) ? full : idle).push(d);
  const long = (d: D) => now - d.updatedAt.getTime() >= LONG_IDLE_MS;
  return {
    full,
    idleSoon: idle.filter((d) => !long(d)).map((d) => d._id),
    soonAt: now + opts.sweepAfterMs,
    idleLong: idle.filter(long).map((d) => d._id),
    laterAt: now + Math.max(IDLE_LOOK_EVERY_MS, opts.sweepAfterMs),
  };
}

/** A pass takes another batch while the last one was full (more may be due) and within the pass's budget. */
export function anotherBatch(looked: number, batch: number, elapsedMs: number): boolean {
  return looked >= batch && elapsedMs < PASS_BUDGET_MS;
}
