/**
 * The audit chain (issue #31): verifyAuditLog names the first broken link when a stored entry is
 * altered, removed (in the middle, at the start, at the end) or inserted; two writers appending
 * at once (two API instances on one database) never fork the chain; retention removes old entries
 * and the chain stays verifiable from the oldest kept one (the anchor). Forgeries here are made
 * with the audit key (someone who holds it) unless said otherwise: without it, test/audit/keyed.test.ts.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { AuditKeyring, AuditService, auditHash, type AuditRecord } from "../../src/core/audit/index.js";
import { metrics, silentLogger } from "../../src/support/index.js";
import type { AuditEntryDoc } from "../../src/domain/index.js";
import { useEmulatedMongo } from "../helpers/mongo.js";

const store = useEmulatedMongo("audit-chain");
let now = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;

const SECRET = "audit-chain-test-secret-of-at-least-32-characters";
const keys = new AuditKeyring(SECRET);
/** The hash an entry gets from someone holding the audit key. */
const keyedHash = (body: Omit<AuditEntryDoc, "hash">) => keys.entryHash(body)!;
const service = (retentionMs = 30 * DAY) =>
  new AuditService({ mongo, clock: () => now, log: silentLogger(), settings: { enabled: true, retentionMs, key: null, previousKeys: [] }, secret: SECRET });
const record = (i: number, extra: Partial<AuditRecord> = {}): AuditRecord => ({
  at: new Date(now),
  action: "createJob",
  actor: { userId: "u1", username: "alice", role: "USER", apiKeyId: null },
  address: "127.0.0.1",
  targetIds: [`job-${i}`],
  outcome: "OK",
  error: null,
  args: { input: { name: `job-${i}` } },
  before: null,
  after: { id: `job-${i}` },
  ...extra,
});
const audit = () => mongo.db.collection<AuditEntryDoc>("audit");

let mongo: typeof store.mongo;
beforeEach(async () => {
  mongo = store.mongo;
  await mongo.db.collection("audit").deleteMany({});
  await mongo.db.collection("auditChain").deleteMany({});
});

async function writeTen(s = service()): Promise<AuditEntryDoc[]> {
  for (let i = 1; i <= 10; i++) await s.record(record(i));
  return audit().find({}).sort({ seq: 1 }).toArray();
}

describe("audit chain verification", () => {
  it("holds for entries as written, each linking to the one before; kairos_audit_entries_total counts them", async () => {
    const okCount = async () => (await metrics.auditEntries.get()).values.find((v) => v.labels.outcome === "OK")?.value ?? 0;
    const counted = await okCount();
    const docs = await writeTen();
    expect((await okCount()) - counted).toBe(10);
    expect(docs.map((d) => d.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (let i = 1; i < docs.length; i++) expect(docs[i]!.prevHash).toBe(docs[i - 1]!.hash);
    const v = await service().verify();
    expect(v).toMatchObject({ ok: true, checked: 10, lastSeq: 10, lastHash: docs[9]!.hash, anchorSeq: 0, broken: null });
  });

  it("names an altered entry", async () => {
    const docs = await writeTen();
    await audit().updateOne({ seq: 4 }, { $set: { outcome: "FORBIDDEN" } });
    expect((await service().verify()).broken).toMatchObject({ problem: "ALTERED", seq: 4, entryId: docs[3]!._id });
    // Re-hashing it without the key (SHA-256) does not make it hold; with the key, the next entry still names the original's hash.
    const altered = (await audit().findOne({ seq: 4 }))!;
    const { hash: _old, ...body } = altered;
    await audit().updateOne({ seq: 4 }, { $set: { hash: auditHash(body) } });
    expect((await service().verify()).broken).toMatchObject({ problem: "ALTERED", seq: 4 });
    await audit().updateOne({ seq: 4 }, { $set: { hash: keyedHash(body) } });
    expect((await service().verify()).broken).toMatchObject({ problem: "INSERTED", seq: 5 });
  });

  it("names entries removed in the middle, at the start and at the end", async () => {
    await writeTen();
    await audit().deleteOne({ seq: 6 });
    const mid = (await service().verify()).broken!;
    expect(mid).toMatchObject({ problem: "REMOVED", seq: 7 });
    expect(mid.detail).toContain("between entries 5 and 7");

    await mongo.db.collection("audit").deleteMany({});
    await mongo.db.collection("auditChain").deleteMany({});
    await writeTen();
    await audit().deleteMany({ seq: { $lte: 2 } });
    expect((await service().verify()).broken).toMatchObject({ problem: "REMOVED", seq: 3 });

    await mongo.db.collection("audit").deleteMany({});
    await mongo.db.collection("auditChain").deleteMany({});
    const docs = await writeTen();
    await audit().deleteMany({ seq: { $gte: 9 } });
    const end = (await service().verify()).broken!;
    expect(end).toMatchObject({ problem: "REMOVED", seq: 8, entryId: docs[7]!._id });
    expect(end.detail).toContain("from the end");
  });

  it("names an inserted entry: a forged link in the middle, one appended with a made-up hash", async () => {
    const docs = await writeTen();
    const forged = { ...docs[4]!, _id: "forged-1", seq: 5.5, action: "deleteJob" };
    const { hash: _h, ...body } = forged;
    await audit().insertOne({ ...forged, hash: keyedHash(body) });
    expect((await service().verify()).broken).toMatchObject({ problem: "INSERTED", seq: 5.5, entryId: "forged-1" });

    await audit().deleteOne({ _id: "forged-1" });
    const tail = { ...docs[9]!, _id: "forged-2", seq: 11, prevHash: "f".repeat(64) };
    const { hash: _t, ...tailBody } = tail;
    await audit().insertOne({ ...tail, hash: keyedHash(tailBody) });
    expect((await service().verify()).broken).toMatchObject({ problem: "INSERTED", seq: 11, entryId: "forged-2" });
  });

  it("two writers appending at once (two API instances) make one unforked chain", async () => {
    const a = service();
    const b = service();
    await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).record(record(i))));
    const docs = await audit().find({}).sort({ seq: 1 }).toArray();
    expect(docs.map((d) => d.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(new Set(docs.map((d) => d.targetIds[0])).size).toBe(200);
    expect(await a.verify()).toMatchObject({ ok: true, checked: 200 });
  });

  it("retention removes entries past it and anchors the chain there; the rest stays verifiable, tampering included", async () => {
    const s = service(30 * DAY);
    const start = now;
    for (let i = 1; i <= 6; i++) {
      now = start + i * 10 * DAY;
      await s.record(record(i));
    }
    now = start + 65 * DAY; // entries 1–3 (days 10–30) are past 30 days
    expect(await s.retentionPass()).toEqual({ anchorSeq: 3, removed: 3 });
    expect((await audit().find({}).sort({ seq: 1 }).toArray()).map((d) => d.seq)).toEqual([4, 5, 6]);
    const v = await s.verify();
    expect(v).toMatchObject({ ok: true, checked: 3, anchorSeq: 3, lastSeq: 6 });
    // Writing goes on from the head; a second pass with nothing to remove changes nothing.
    await s.record(record(7));
    expect(await s.retentionPass()).toBeNull();
    expect(await s.verify()).toMatchObject({ ok: true, checked: 4 });
    // Removing the oldest kept entry is not retention: it is reported.
    await audit().deleteOne({ seq: 4 });
    expect((await s.verify()).broken).toMatchObject({ problem: "REMOVED", seq: 5 });
    now = start;
  });

  it("the anchor cannot be moved to hide a removal: without the key at all; with it, not over young entries, altered, or with entries below it changed", async () => {
    const s = service(30 * DAY);
    const start = now;
    for (let i = 1; i <= 6; i++) {
      now = start + i * 10 * DAY;
      await s.record(record(i));
    }
    const chain = () => mongo.db.collection<{ _id: string; [k: string]: unknown }>("auditChain");
    /** The anchor as a retention pass (holding the key) sets it: signed over its seq, hash, time of the cut and retention. */
    const anchorAt = async (e: AuditEntryDoc, truncatedAt: number, retentionMs: number, changes: Record<string, unknown> = {}) => {
      const signed = keys.sign("anchor", [e.seq, e.hash, truncatedAt, retentionMs]);
      await chain().updateOne({ _id: "anchor" }, { $set: { seq: e.seq, hash: e.hash, at: e.at, truncatedAt: new Date(truncatedAt), retentionMs, entry: e, ...signed, ...changes } }, { upsert: true });
    };
    // An interrupted retention pass: the anchor moved to 3, entries 1–3 still stored. They are checked too.
    now = start + 65 * DAY;
    const e3 = (await audit().findOne({ seq: 3 }))!;
    await anchorAt(e3, now, 30 * DAY);
    expect(await s.verify()).toMatchObject({ ok: true, anchorSeq: 3, checked: 3 });
    await audit().updateOne({ seq: 2 }, { $set: { outcome: "FORBIDDEN" } });
    expect((await s.verify()).broken).toMatchObject({ problem: "ALTERED", seq: 2 });
    await audit().deleteMany({ seq: { $lte: 3 } });
    expect((await s.verify()).ok).toBe(true);

    // Moved over entries younger than the retention (5: 50 days old, retention 30 days at day 65 → ok; 6 at day 60 is not).
    const e5 = (await audit().findOne({ seq: 5 }))!;
    await audit().deleteMany({ seq: { $lte: 5 } });
    // Without the key the anchor cannot be moved at all: its signature no longer holds.
    await chain().updateOne({ _id: "anchor" }, { $set: { seq: 5, hash: e5.hash, at: e5.at, truncatedAt: new Date(now), retentionMs: 30 * DAY, entry: e5 } });
    expect((await s.verify()).broken).toMatchObject({ problem: "ALTERED", seq: 5 });
    await chain().updateOne({ _id: "anchor" }, { $unset: { keyId: "", mac: "" } });
    expect((await s.verify()).broken).toMatchObject({ problem: "UNKEYED", seq: 5 });
    // With the key, the retention check still holds.
    await anchorAt(e5, now, 30 * DAY);
    expect((await s.verify()).broken).toMatchObject({ problem: "REMOVED", seq: 5 });
    // Claiming a shorter retention: without the key, the signature breaks; with it, it does not help below one day, the shortest setting.
    await chain().updateOne({ _id: "anchor" }, { $set: { retentionMs: 1 } });
    expect((await s.verify()).broken).toMatchObject({ problem: "ALTERED", seq: 5 });
    await anchorAt(e5, now, 1);
    expect((await s.verify()).ok).toBe(true); // entry 5 is 15 days older than the cut: a 1-day retention would have removed it
    // Its entry made younger: the entry's hash breaks. The cut claimed in the future: reported.
    await anchorAt(e5, now, 30 * DAY, { at: new Date(now), entry: { ...e5, at: new Date(now) } });
    expect((await s.verify()).broken).toMatchObject({ problem: "ALTERED", seq: 5 });
    await anchorAt(e5, now + 100 * DAY, 30 * DAY);
    expect((await s.verify()).broken).toMatchObject({ problem: "REMOVED", seq: 5 });
    // An anchor that does not hold the entry whose hash it names.
    await anchorAt(e5, now, 30 * DAY, { hash: "e".repeat(64) });
    expect((await s.verify()).broken).toMatchObject({ problem: "ALTERED", seq: 5 });
    now = start;
  });

  it("off: nothing is recorded", async () => {
    const off = new AuditService({ mongo, clock: () => now, log: silentLogger(), settings: { enabled: false, retentionMs: DAY, key: null, previousKeys: [] }, secret: SECRET });
    expect(await off.record(record(1))).toBeNull();
    expect(await audit().countDocuments()).toBe(0);
  });
});
