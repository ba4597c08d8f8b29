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
 *
 * Keys (./keys.ts): a keyed entry must carry the HMAC of its key, taken by its key id among the
 * current key and the previous ones; the head, anchor and `keyed` records must carry their
 * signatures. Unkeyed entries (v1, SHA-256: written before the chain was keyed) are verified as
 * the legacy chain, and only below the `keyed` record's seq: one from there on, or an unsigned
 * record where the chain is keyed, was written without the key (UNKEYED).
 */
import { AUDIT_GENESIS_HASH, AuditBreak, type AuditChainDoc, type AuditEntryDoc } from "../../domain/index.js";
import { auditChainRecords, auditEntriesInOrder, type Mongo } from "../../store/index.js";
import type { AuditKeyring } from "./keys.js";

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
  /** The last unkeyed entry checked (v1, SHA-256 only: written before the chain was keyed), 0 when none. */
  unkeyedThrough: number;
  /** When the chain began to be keyed (the `keyed` record's time): null when no record says so. */
  keyedSince: Date | null;
  broken: AuditBrokenLink | null;
}

const DAY = 86_400_000;
/** How far ahead of this process's clock an anchor's time may be (another instance's clock). */
const CLOCK_SKEW_MS = 5 * 60_000;

const withoutHash = ({ hash: _h, ...body }: AuditEntryDoc): Omit<AuditEntryDoc, "hash"> => body;

/**
 * Why a record of the chain does not hold its signature, or null. An unsigned record is taken as
 * written before the chain was keyed only while its seq is below the `keyed` record's.
 */
function recordProblem(keys: AuditKeyring, r: AuditChainDoc, fields: unknown[], keyedFrom: number, what: string): AuditBrokenLink | null {
  const at = { seq: r.seq, entryId: null };
  if (r.keyId === undefined && r.mac === undefined) {
    return r.seq < keyedFrom ? null : { problem: AuditBreak.UNKEYED, ...at, detail: `the ${what} (entry ${r.seq}) is not signed with the audit key: it was written without the key` };
  }
  const ok = typeof r.keyId === "string" && typeof r.mac === "string" ? keys.checkRecord(r.keyId, r._id, fields, r.mac) : false;
  if (ok === null) return { problem: AuditBreak.UNKNOWN_KEY, ...at, detail: unknownKey(`the ${what} (entry ${r.seq})`, r.keyId!) };
  return ok ? null : { problem: AuditBreak.ALTERED, ...at, detail: `the ${what} (entry ${r.seq}) does not hold its signature: it was changed without the key` };
}

const unknownKey = (what: string, keyId: string) =>
  `${what} was signed with the audit key ${keyId}, which is neither KAIROS_AUDIT_KEY's nor one of KAIROS_AUDIT_PREVIOUS_KEYS' (list the key it was written with there)`;

/** Why a stored entry does not hold (its hash, its key, its being unkeyed where keys are required), or null. */
function entryProblem(keys: AuditKeyring, e: AuditEntryDoc, keyedFrom: number): AuditBrokenLink | null {
  const at = { seq: e.seq, entryId: e._id };
  const name = `entry ${e.seq} (${e._id}, ${e.action})`;
  if (e.v === 1 && e.seq >= keyedFrom) {
    return { problem: AuditBreak.UNKEYED, ...at, detail: `${name} has an unkeyed hash (SHA-256), but the chain is keyed from entry ${keyedFrom}: it was written without the audit key` };
  }
  if (e.v !== 1 && e.v !== 2) return { problem: AuditBreak.ALTERED, ...at, detail: `${name} has an unknown encoding version ${String(e.v)}` };
  const expected = keys.entryHash(withoutHash(e));
  if (expected === null) return { problem: AuditBreak.UNKNOWN_KEY, ...at, detail: unknownKey(name, String(e.keyId)) };
  if (expected !== e.hash) return { problem: AuditBreak.ALTERED, ...at, detail: `${name} does not hash to its stored hash: its content was changed after it was written` };
  if (e.v === 2 && e.seq < keyedFrom) {
    return { problem: AuditBreak.ALTERED, ...at, detail: `${name} is keyed, but the record of where keyed entries begin names entry ${keyedFrom}: that record was removed and made again` };
  }
  return null;
}

/** Why the anchor cannot be where retention put it, or null. */
function anchorProblem(keys: AuditKeyring, anchor: AuditChainDoc, now: number, keyedFrom: number): AuditBrokenLink | null {
  const at = { seq: anchor.seq, entryId: anchor.entry?._id ?? null };
  const e = anchor.entry;
  if (!e || e.seq !== anchor.seq || e.hash !== anchor.hash || keys.entryHash(withoutHash(e)) !== anchor.hash) {
    return { problem: AuditBreak.ALTERED, ...at, detail: `the anchor record (entry ${anchor.seq}) was changed: it does not hold the entry whose hash it names` };
  }
  const signed = recordProblem(keys, anchor, [anchor.seq, anchor.hash, anchor.truncatedAt?.getTime() ?? null, anchor.retentionMs ?? null], keyedFrom, "anchor record");
  if (signed) return { ...signed, entryId: e._id };
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

/**
 * `keys`: the keys entries may be signed with. The `keyed` record is made before this process
 * writes or reads the chain (AuditService.prepare): missing here, it was removed since.
 */
export async function verifyAuditChain(mongo: Mongo, keys: AuditKeyring, now: number): Promise<AuditVerification> {
  // The records first: entries written after this read are beyond the head read here, which is fine.
  const { anchor, head, keyed } = await auditChainRecords(mongo);
  const anchorSeq = anchor?.seq ?? 0;
  const anchorHash = anchor?.hash ?? AUDIT_GENESIS_HASH;
  const keyedFrom = keyed?.seq ?? 1;
  let prev = { seq: anchorSeq, hash: anchorHash, id: null as string | null };
  let below: { seq: number; hash: string } | null = null;
  let checked = 0;
  let unkeyedThrough = 0;
  const result = (broken: AuditBrokenLink | null): AuditVerification => ({
    ok: broken === null,
    checked,
    anchorSeq,
    anchorHash,
    lastSeq: prev.seq,
    lastHash: prev.hash,
    unkeyedThrough,
    keyedSince: keyed?.at ?? null,
    broken,
  });
  if (!keyed) {
    return result({ problem: AuditBreak.REMOVED, seq: null, entryId: null, detail: "the record of where keyed entries begin (auditChain \"keyed\") was removed" });
  }
  const keyedProblem = recordProblem(keys, keyed, [keyed.seq, keyed.at?.getTime() ?? null], 0, "record of where keyed entries begin");
  if (keyedProblem) return result(keyedProblem);
  if (anchor) {
    const problem = anchorProblem(keys, anchor, now, keyedFrom);
    if (problem) return result(problem);
  }
  if (head) {
    const problem = recordProblem(keys, head, [head.seq, head.hash], keyedFrom, "head record");
    if (problem) return result(problem);
  }
  for await (const e of auditEntriesInOrder(mongo)) {
    const at = { seq: e.seq, entryId: e._id };
    const problem = entryProblem(keys, e, keyedFrom);
    if (problem) {
      if (e.seq <= anchorSeq) checked++;
      return result(problem);
    }
    if (e.v === 1 && e.seq > anchorSeq) unkeyedThrough = e.seq;
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
