/**
 * Verification of the chain (verifyAuditLog): every entry, in `seq` order, must hash to its stored
 * hash, take the next `seq`, and name the hash of the entry before it; the last must reach the head
 * record. The first link that does not hold is reported: an entry altered, entries removed (a gap,
 * before the oldest kept entry, or at the end), or an entry inserted.
 *
 * The anchor (where retention cut) is checked too, since whoever can write to the store could move
 * it over entries to hide their removal: it holds the anchored entry whole, which must hash to the
 * anchor's hash (so its time cannot be changed), and that entry must have been past the retention
 * in force when the anchor was set (at least P1D, the shortest setting), at a time not in the
 * future. Entries at or below the anchor that are still stored (a retention pass interrupted
 * between moving the anchor and deleting) are checked as well: each must hash to its hash, link to
 * a stored predecessor, and the anchored one must be the anchor's.
 */
import { AUDIT_GENESIS_HASH, AuditBreak, type AuditChainDoc } from "../../domain/index.js";
import { auditChainRecords, auditEntriesInOrder, type Mongo } from "../../store/index.js";
import { auditHash } from "./canonical.js";

export interface AuditBrokenLink {
  problem: AuditBreak;
  /** The entry where the chain breaks (for entries removed at the end: the last one kept), null when there is none. */
  seq: number | null;
  entryId: string | null;
  detail: string;
}

export interface AuditVerification {
  ok: boolean;
  /** Entries checked (those after the anchor). */
  checked: number;
  /** The anchor the oldest kept entry links to (0 and 64 zeros when retention never removed any). */
  anchorSeq: number;
  anchorHash: string;
  /** The last entry checked: its seq and hash (pin it elsewhere to detect a rewritten tail later). */
  lastSeq: number;
  lastHash: string;
  broken: AuditBrokenLink | null;
}

const DAY = 86_400_000;
/** How far ahead of this process's clock an anchor's time may be (another instance's clock). */
const CLOCK_SKEW_MS = 5 * 60_000;

/** Why the anchor cannot be where retention put it, or null. */
function anchorProblem(anchor: AuditChainDoc, now: number): AuditBrokenLink | null {
  const at = { seq: anchor.seq, entryId: anchor.entry?._id ?? null };
  const e = anchor.entry;
  if (!e || e.seq !== anchor.seq || e.hash !== anchor.hash || auditHash(e) !== anchor.hash) {
    return { problem: AuditBreak.ALTERED, ...at, detail: `the anchor record (entry ${anchor.seq}) was changed: it does not hold the entry whose hash it names` };
  }
  const truncatedAt = anchor.truncatedAt?.getTime() ?? Number.NaN;
  const kept = Math.max(anchor.retentionMs ?? 0, DAY);
  if (!(truncatedAt <= now + CLOCK_SKEW_MS) || !(e.at.getTime() <= truncatedAt - kept)) {
    return {
      problem: AuditBreak.REMOVED,
      ...at,
      detail: `entries up to ${anchor.seq} were removed before their retention ended: the anchored entry is from ${e.at.toISOString()}, not past the retention at ${anchor.truncatedAt?.toISOString() ?? "an unknown time"}`,
    };
  }
  return null;
}

export async function verifyAuditChain(mongo: Mongo, now: number): Promise<AuditVerification> {
  // The records first: entries written after this read are beyond the head read here, which is fine.
  const { anchor, head } = await auditChainRecords(mongo);
  const anchorSeq = anchor?.seq ?? 0;
  const anchorHash = anchor?.hash ?? AUDIT_GENESIS_HASH;
  let prev = { seq: anchorSeq, hash: anchorHash, id: null as string | null };
  let below: { seq: number; hash: string } | null = null;
  let checked = 0;
  const result = (broken: AuditBrokenLink | null): AuditVerification => ({ ok: broken === null, checked, anchorSeq, anchorHash, lastSeq: prev.seq, lastHash: prev.hash, broken });
  if (anchor) {
    const problem = anchorProblem(anchor, now);
    if (problem) return result(problem);
  }
  for await (const e of auditEntriesInOrder(mongo)) {
    const at = { seq: e.seq, entryId: e._id };
    if (auditHash(e) !== e.hash) {
      if (e.seq <= anchorSeq) checked++;
      return result({ problem: AuditBreak.ALTERED, ...at, detail: `entry ${e.seq} (${e._id}, ${e.action}) does not hash to its stored hash: its content was changed after it was written` });
    }
    if (e.seq <= anchorSeq) {
      // Left by an interrupted retention pass: its predecessors may be gone, but what is stored must still chain.
      if (below && below.seq === e.seq - 1 && e.prevHash !== below.hash) {
        return result({ problem: AuditBreak.INSERTED, ...at, detail: `entry ${e.seq} (${e._id}, ${e.action}) does not link to entry ${below.seq}: one of the two was put in place of the entry written there` });
      }
      if (!Number.isInteger(e.seq) || (e.seq === anchorSeq && e.hash !== anchorHash)) {
        return result({ problem: AuditBreak.INSERTED, ...at, detail: `entry ${e.seq} (${e._id}, ${e.action}) is not the entry the anchor holds` });
      }
      below = { seq: e.seq, hash: e.hash };
      continue;
    }
    checked++;
    if (!Number.isInteger(e.seq) || e.seq <= prev.seq) {
      return result({ problem: AuditBreak.INSERTED, ...at, detail: `entry ${e.seq} (${e._id}, ${e.action}) is not a link of the chain: after entry ${prev.seq} the next is ${prev.seq + 1}` });
    }
    if (e.seq > prev.seq + 1) {
      const gap = e.seq - prev.seq - 1;
      const where = prev.seq === anchorSeq ? `before the oldest kept entry (${e.seq}; the anchor is ${anchorSeq})` : `between entries ${prev.seq} and ${e.seq}`;
      return result({ problem: AuditBreak.REMOVED, ...at, detail: `${gap} ${gap === 1 ? "entry was" : "entries were"} removed ${where}` });
    }
    if (e.prevHash !== prev.hash) {
      const before = prev.seq === anchorSeq ? (anchor ? `the anchor (${anchorSeq})` : "the start of the chain") : `entry ${prev.seq}`;
      return result({ problem: AuditBreak.INSERTED, ...at, detail: `entry ${e.seq} (${e._id}, ${e.action}) does not link to ${before}: one of the two was put in place of the entry written there` });
    }
    prev = { seq: e.seq, hash: e.hash, id: e._id };
  }
  if (head && head.seq > prev.seq) {
    const gap = head.seq - prev.seq;
    return result({ problem: AuditBreak.REMOVED, seq: prev.seq === anchorSeq ? null : prev.seq, entryId: prev.id, detail: `${gap} ${gap === 1 ? "entry was" : "entries were"} removed from the end: entries up to ${head.seq} were written, the last kept is ${prev.seq}` });
  }
  if (head && head.seq === prev.seq && head.seq > anchorSeq && head.hash !== prev.hash) {
    return result({ problem: AuditBreak.INSERTED, seq: prev.seq, entryId: prev.id, detail: `entry ${prev.seq} is not the entry written there (the head record names another hash)` });
  }
  return result(null);
}
