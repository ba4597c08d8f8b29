/**
 * The fire ledger's entries: every slot of a job ends in exactly one recorded outcome, so no fire
 * disappears silently. decide-fire.ts produces them; the store writes them (entry id = `key`,
 * unique, so replaying a fire writes nothing new). Keys are the domain's fire keys
 * (domain/fire-keys.ts): `jobId@slotMs` for a slot, `jobId@slotMs:dst` for the wall times a DST
 * gap swallowed.
 */
import { fireKey, isSlotFireKey } from "../domain/index.js";
import type { FireOutcome } from "../domain/index.js";
import type { Slot } from "./dst.js";
import type { Millis } from "./duration.js";

export type { FireOutcome };

export interface LedgerEntry {
  /** The ledger id: the slot's fireKey, or the DST-skip key. */
  key: string;
  /** The slot's nominal instant (for a DST skip: the end of the gap; for a summary: the range end). */
  slotAt: Millis;
  outcome: FireOutcome;
  /** Human text: why this outcome (null for a plain FIRED). */
  reason: string | null;
  /** How late the slot was handled, when that says something (fires and misses). */
  latenessMs: Millis | null;
  /** The run of a FIRED slot. */
  runId: string | null;
  /**
   * Set on the one MISSED entry that summarizes a range too long to list (misfire `missedMore`):
   * it stands for every slot in `(afterExclusive, throughInclusive]`. Not stored; the entry's key
   * is the slot key of the range end.
   */
  covers?: { afterExclusive: Millis; throughInclusive: Millis };
}

/** Outcome of one slot key within a fire (a summary entry stands for its whole range). */
type Checked = Pick<LedgerEntry, "key" | "covers">;

/**
 * Checks that `entries` give each of `slots` exactly one outcome (listed, or inside one summary's
 * range), use no key twice (the ledger is insert-once: a second entry under a key would be dropped
 * silently), and name no slot outside `slots`. DST-skip keys are not slots. Returns the problems
 * found; empty means the ledger accounts for the window.
 */
export function ledgerProblems(jobId: string, slots: readonly Slot[], entries: readonly Checked[]): string[] {
  const problems: string[] = [];
  const expected = new Set(slots.map((s) => fireKey(jobId, s.at)));
  const keys = new Map<string, number>();
  for (const e of entries) keys.set(e.key, (keys.get(e.key) ?? 0) + 1);
  const summaries = entries.filter((e) => e.covers);
  for (const s of slots) {
    const k = fireKey(jobId, s.at);
    const listed = entries.filter((e) => !e.covers && e.key === k).length;
    const summarized = summaries.filter((e) => s.at > e.covers!.afterExclusive && s.at <= e.covers!.throughInclusive).length;
    if (listed + summarized !== 1) problems.push(`${k}: ${listed + summarized} outcomes`);
  }
  const summaryKeys = new Set(summaries.map((e) => e.key));
  for (const [k, n] of keys) {
    if (n > 1 && !expected.has(k)) problems.push(`${k}: ${n} outcomes`);
    else if (n > 1 && summaryKeys.has(k)) problems.push(`${k}: ${n} entries under one key`);
    if (!expected.has(k) && !summaryKeys.has(k) && isSlotFireKey(jobId, k)) problems.push(`${k}: outcome for a slot outside the window`);
  }
  return problems;
}

