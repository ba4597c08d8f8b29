/**
 * The fire ledger: every slot of a job ends in exactly one recorded outcome, so no fire
 * disappears silently. This module turns a misfire plan plus the job's state into ledger
 * entries and run requests; the store writes them (entry id = `key`, unique, so replaying a tick
 * writes nothing new).
 */
import type { DstSkip, Slot } from "./dst.js";
import type { Millis } from "./duration.js";
import type { MisfirePlan } from "./misfire.js";
import { applyOverlap, decideOverlap, type OverlapDecision, type OverlapPolicy, type OverlapState } from "./overlap.js";

import type { FireOutcome } from "../../domain/statuses.js";
export type { FireOutcome };

export interface LedgerEntry {
  /** Unique per job and slot: the fireKey for slots, a derived key for DST skips and summaries. */
  key: string;
  /** The slot's nominal instant (for a DST skip: the end of the gap; for a summary: the range end). */
  slotAt: Millis;
  outcome: FireOutcome;
  /** Human text: why this outcome. */
  reason: string;
}

/** A run to create for a FIRED entry, with how the overlap policy wants it created. */
export interface RunRequest {
  slot: Slot;
  fireKey: string;
  /** START = queued; HOLD = pending behind the active run; REPLACE = cancel active/pending first. */
  action: Exclude<OverlapDecision, "SKIP">;
}

/** The identity of one fire of a job: a run for the same key is created at most once. */
export const fireKey = (jobId: string, slotAt: Millis): string => `${jobId}@${slotAt}`;
/** Ledger key of the wall times one DST gap swallowed (they share the gap-end instant, so they need their own key). */
export const dstSkipKey = (jobId: string, skip: DstSkip): string => `${jobId}@dst-gap:${skip.nominal}`;

export interface AccountArgs {
  jobId: string;
  plan: MisfirePlan;
  paused: boolean;
  overlap: OverlapPolicy;
  /** Unfinished runs of the job before this tick. */
  state: OverlapState;
  /** fireKeys that already have a run (from a previous, interrupted attempt at this tick). */
  existing: ReadonlySet<string>;
}

/**
 * Gives every slot of a plan exactly one outcome, in slot order, and lists the runs to create.
 * Fires are decided one after another against the evolving overlap state, so under FORBID a
 * FIRE_ALL catch-up starts the first slot and records the rest as SKIPPED_OVERLAP.
 */
export function accountSlots(args: AccountArgs): { entries: LedgerEntry[]; runs: RunRequest[] } {
  const { jobId, plan } = args;
  const entries: LedgerEntry[] = [];
  const runs: RunRequest[] = [];
  for (const slot of plan.missed) {
    entries.push({ key: fireKey(jobId, slot.at), slotAt: slot.at, outcome: "MISSED", reason: plan.error ?? "missed: not run under the misfire policy" });
  }
  if (plan.missedMore) {
    const { afterExclusive, throughInclusive } = plan.missedMore;
    entries.push({
      key: `${jobId}@missed:${afterExclusive}-${throughInclusive}`,
      slotAt: throughInclusive,
      outcome: "MISSED",
      reason: `missed: every further slot after ${iso(afterExclusive)} through ${iso(throughInclusive)} (too many to list)`,
    });
  }
  for (const skip of plan.dstSkipped) {
    entries.push({
      key: dstSkipKey(jobId, skip),
      slotAt: skip.at,
      outcome: "SKIPPED_DST",
      reason: `local time ${skip.nominal}${skip.count > 1 ? ` and ${skip.count - 1} later wall time(s)` : ""} did not exist (daylight saving gap) and dstGap is SKIP`,
    });
  }
  let state = args.state;
  for (const slot of plan.fire) {
    const key = fireKey(jobId, slot.at);
    if (args.existing.has(key)) {
      entries.push({ key, slotAt: slot.at, outcome: "DEDUPLICATED", reason: "a run for this fire already exists" });
      continue;
    }
    if (args.paused) {
      entries.push({ key, slotAt: slot.at, outcome: "SKIPPED_PAUSED", reason: "the job was paused" });
      continue;
    }
    const decision = decideOverlap(args.overlap, state);
    if (decision === "SKIP") {
      entries.push({ key, slotAt: slot.at, outcome: "SKIPPED_OVERLAP", reason: `overlap policy ${args.overlap}: ${state.active} active, ${state.pending} pending` });
      continue;
    }
    state = applyOverlap(state, decision);
    entries.push({ key, slotAt: slot.at, outcome: "FIRED", reason: decision === "START" ? "fired" : `fired (${decision.toLowerCase()})` });
    runs.push({ slot, fireKey: key, action: decision });
  }
  entries.sort((a, b) => a.slotAt - b.slotAt);
  return { entries, runs };
}

/**
 * Checks that `entries` give each of `slots` exactly one outcome and contain no other slot
 * entries (summaries and DST skips, whose keys are not fireKeys, are ignored). Returns the
 * problems found; empty means the ledger accounts for the window.
 */
export function ledgerProblems(jobId: string, slots: readonly Slot[], entries: readonly LedgerEntry[]): string[] {
  const problems: string[] = [];
  const expected = new Set(slots.map((s) => fireKey(jobId, s.at)));
  const seen = new Map<string, number>();
  for (const e of entries) seen.set(e.key, (seen.get(e.key) ?? 0) + 1);
  for (const k of expected) {
    const n = seen.get(k) ?? 0;
    if (n !== 1) problems.push(`${k}: ${n} outcomes`);
  }
  for (const [k, n] of seen) {
    if (n > 1 && !expected.has(k)) problems.push(`${k}: ${n} outcomes`);
    if (!expected.has(k) && /@\d+$/.test(k)) problems.push(`${k}: outcome for a slot outside the window`);
  }
  return problems;
}

function iso(ms: Millis): string {
  return new Date(ms).toISOString();
}
