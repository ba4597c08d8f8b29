/**
 * Verification of the chain (verifyAuditLog): every entry from the anchor on, in `seq` order, must
 * hash to its stored hash, take the next `seq`, and name the hash of the entry before it; the last
 * must reach the head record. The first link that does not hold is reported: an entry altered,
 * entries removed (a gap, before the oldest kept entry, or at the end), or an entry inserted.
 */
import { AUDIT_GENESIS_HASH, AuditBreak } from "../../domain/index.js";
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

export async function verifyAuditChain(mongo: Mongo): Promise<AuditVerification> {
  // The records first: entries written after this read are beyond the head read here, which is fine.
  const { anchor, head } = await auditChainRecords(mongo);
  const anchorSeq = anchor?.seq ?? 0;
  const anchorHash = anchor?.hash ?? AUDIT_GENESIS_HASH;
  let prev = { seq: anchorSeq, hash: anchorHash, id: null as string | null };
  let checked = 0;
  const result = (broken: AuditBrokenLink | null): AuditVerification => ({ ok: broken === null, checked, anchorSeq, anchorHash, lastSeq: prev.seq, lastHash: prev.hash, broken });
  for await (const e of auditEntriesInOrder(mongo)) {
    // Entries at or below the anchor are what an interrupted retention pass left: not in the chain any more.
    if (e.seq <= anchorSeq && Number.isInteger(e.seq)) continue;
    checked++;
    const at = { seq: e.seq, entryId: e._id };
    if (auditHash(e) !== e.hash) {
      return result({ problem: AuditBreak.ALTERED, ...at, detail: `entry ${e.seq} (${e._id}, ${e.action}) does not hash to its stored hash: its content was changed after it was written` });
    }
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
