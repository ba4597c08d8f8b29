/**
 * The keyed chain (issue #31; docs/audit.md, "The key"): someone who can write to MongoDB but does
 * not hold the audit key rewrites the whole tail of the chain, the head record included, with
 * direct writes, and verifyAuditLog reports it however it is done (entries re-hashed with SHA-256,
 * with a key of their own, under the real key's id, records unsigned or removed). Entries written
 * before the chain was keyed are verified as the legacy chain below where keyed entries begin, and
 * reported as unkeyed. A rotated key verifies with the old one listed in the previous keys.
 */
import { createHmac } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import { auditEntryText, auditHash, AuditKeyring, AuditService, type AuditRecord } from "../../src/core/audit/index.js";
import { silentLogger } from "../../src/support/index.js";
import type { AuditChainDoc, AuditEntryDoc } from "../../src/domain/index.js";
import { useEmulatedMongo } from "../helpers/mongo.js";

const store = useEmulatedMongo("audit-keyed");
const SECRET = "the-audit-secret-of-this-test-32-chars-long";
let now = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;

const service = (secret = SECRET, previousKeys: string[] = [], key: string | null = null) =>
  new AuditService({ mongo: store.mongo, clock: () => now, log: silentLogger(), settings: { enabled: true, retentionMs: 365 * 86_400_000, key, previousKeys }, secret });
const record = (i: number): AuditRecord => ({
  at: new Date(now),
  action: "updateJob",
  actor: { userId: "u1", username: "alice", role: "USER", apiKeyId: null },
  address: "127.0.0.1",
  targetIds: [`job-${i}`],
  outcome: "OK",
  error: null,
  args: { id: `job-${i}`, input: { paused: true } },
  before: { paused: false },
  after: { paused: true },
});
const audit = () => store.mongo.db.collection<AuditEntryDoc>("audit");
const chain = () => store.mongo.db.collection<AuditChainDoc>("auditChain");
const entries = () => audit().find({}).sort({ seq: 1 }).toArray();

async function write(s: AuditService, from: number, to: number): Promise<void> {
  for (let i = from; i <= to; i++) {
    now += MINUTE;
    await s.record(record(i));
  }
}

/**
 * The attacker's rewrite from entry `from` to the end: each entry changed (`change`), re-hashed with
 * `hash` and re-linked to the one before, then the head record set to the new last entry.
 */
async function rewriteTail(from: number, change: (e: AuditEntryDoc) => AuditEntryDoc, hash: (body: Omit<AuditEntryDoc, "hash">) => string, head: (last: AuditEntryDoc) => Partial<AuditChainDoc>) {
  const all = await entries();
  let prevHash = all.find((e) => e.seq === from - 1)?.hash ?? "0".repeat(64);
  let last: AuditEntryDoc | null = null;
  for (const e of all.filter((x) => x.seq >= from)) {
    const { hash: _h, ...body } = { ...change(e), prevHash };
    const doc = { ...body, hash: hash(body) } as AuditEntryDoc;
    await audit().replaceOne({ _id: e._id }, doc);
    prevHash = doc.hash;
    last = doc;
  }
  await chain().replaceOne({ _id: "head" }, { _id: "head", seq: last!.seq, hash: last!.hash, ...head(last!) });
}

const denied = (e: AuditEntryDoc): AuditEntryDoc => ({ ...e, outcome: "FORBIDDEN", after: null });
const unkeyed = (e: AuditEntryDoc): AuditEntryDoc => {
  const { keyId: _k, ...rest } = denied(e);
  return { ...rest, v: 1 };
};

beforeEach(async () => {
  await audit().deleteMany({});
  await chain().deleteMany({});
  await store.mongo.db.collection("auditIntents").deleteMany({});
});

describe("a rewrite of the tail without the key", () => {
  it("entries and head record re-hashed with SHA-256 (as unkeyed entries): UNKEYED", async () => {
    const s = service();
    await write(s, 1, 10);
    expect(await s.verify()).toMatchObject({ ok: true, checked: 10, unkeyedThrough: 0 });
    const head = (await chain().findOne({ _id: "head" }))!;
    await rewriteTail(5, unkeyed, auditHash, () => ({}));
    const v = await s.verify();
    expect(v.ok).toBe(false);
    expect(v.broken).toMatchObject({ problem: "UNKEYED", seq: 10 });
    expect(v.broken!.detail).toContain("head record");
    // The head record left as it was: the first rewritten entry is named.
    await chain().replaceOne({ _id: "head" }, head);
    const w = await s.verify();
    expect(w.broken).toMatchObject({ problem: "UNKEYED", seq: 5 });
    expect(w.broken!.detail).toContain("keyed from entry 1");
  });

  it("entries re-hashed as keyed ones with a key of the attacker's, under the real key's id or their own: ALTERED or UNKNOWN_KEY", async () => {
    const s = service();
    await write(s, 1, 10);
    const mine = new AuditKeyring("an-attackers-own-secret-of-32-characters");
    const ownHash = (body: Omit<AuditEntryDoc, "hash">) => createHmac("sha256", "guess").update(auditEntryText(body)).digest("hex");

    // The real key's id, an HMAC under a guessed key, the head record re-signed likewise.
    await rewriteTail(5, denied, ownHash, (last) => ({ keyId: s.keyId, mac: createHmac("sha256", "guess").update(JSON.stringify(["auditChain", "head", last.seq, last.hash])).digest("hex") }));
    expect((await s.verify()).broken).toMatchObject({ problem: "ALTERED", seq: 10 });
    // The head record left unsigned: reported as such; the first rewritten entry once the head is out of the way.
    await chain().updateOne({ _id: "head" }, { $unset: { keyId: "", mac: "" } });
    expect((await s.verify()).broken).toMatchObject({ problem: "UNKEYED", seq: 10 });
    await chain().deleteOne({ _id: "head" });
    expect((await s.verify()).broken).toMatchObject({ problem: "ALTERED", seq: 5 });

    // A key of their own, under its own id.
    await audit().deleteMany({});
    await chain().deleteMany({});
    const s2 = service();
    await write(s2, 1, 10);
    await rewriteTail(5, (e) => ({ ...denied(e), keyId: mine.keyId }), (body) => mine.entryHash(body)!, (last) => mine.sign("head", [last.seq, last.hash]));
    const v = await s2.verify();
    expect(v.broken).toMatchObject({ problem: "UNKNOWN_KEY", seq: 10 });
    expect(v.broken!.detail).toContain("KAIROS_AUDIT_PREVIOUS_KEYS");
  });

  it("entries removed from the end and the head record lowered: its signature does not hold", async () => {
    const s = service();
    await write(s, 1, 10);
    const e7 = (await audit().findOne({ seq: 7 }))!;
    await audit().deleteMany({ seq: { $gt: 7 } });
    await chain().updateOne({ _id: "head" }, { $set: { seq: 7, hash: e7.hash } });
    expect((await s.verify()).broken).toMatchObject({ problem: "ALTERED", seq: 7 });
  });

  it("the whole chain made unkeyed, the record of where keys began removed: reported in this process; a new one re-makes the record at the end, which shows in keyedSince", async () => {
    const s = service();
    const upgraded = now;
    await write(s, 1, 6);
    // From entry 3: the record removed, the tail unkeyed. Entries 1–2 are keyed, below where a new record would say keys began.
    await chain().deleteOne({ _id: "keyed" });
    expect((await s.verify()).broken).toMatchObject({ problem: "REMOVED", seq: null });
    await rewriteTail(3, unkeyed, auditHash, () => ({}));
    now += 60 * MINUTE;
    expect((await service().verify()).broken).toMatchObject({ problem: "ALTERED", seq: 1 });
    expect((await service().verify()).broken!.detail).toContain("removed and made again");

    // All of it: the store then looks as before the upgrade, and the next process takes it so. What shows is the record's time.
    await chain().deleteOne({ _id: "keyed" });
    await rewriteTail(1, unkeyed, auditHash, () => ({}));
    const v = await service().verify();
    expect(v).toMatchObject({ ok: true, unkeyedThrough: 6 });
    expect(v.keyedSince!.getTime()).toBeGreaterThan(upgraded);
  });
});

describe("entries written before the chain was keyed", () => {
  /** Entries as an earlier version wrote them: SHA-256, no key id, an unsigned head record, no `keyed` record. */
  async function legacyChain(n: number): Promise<AuditEntryDoc[]> {
    const docs: AuditEntryDoc[] = [];
    let prevHash = "0".repeat(64);
    for (let seq = 1; seq <= n; seq++) {
      now += MINUTE;
      const body: Omit<AuditEntryDoc, "hash"> = {
        _id: `legacy-${seq}`, seq, v: 1, at: new Date(now), action: "createJob",
        actor: { userId: "u1", username: "alice", role: "USER", apiKeyId: null },
        address: "127.0.0.1", targetIds: [`job-${seq}`], outcome: "OK", error: null, args: "{}", before: null, after: "{}", prevHash,
      };
      const doc = { ...body, hash: auditHash(body) };
      docs.push(doc);
      prevHash = doc.hash;
    }
    await audit().insertMany(docs);
    await chain().insertOne({ _id: "head", seq: n, hash: prevHash });
    return docs;
  }

  it("verify as the legacy chain below the first keyed entry, and are reported as unkeyed; the keyed entries after them link to them", async () => {
    await legacyChain(4);
    const s = service();
    const started = now;
    await write(s, 5, 7);
    const docs = await entries();
    expect(docs.map((d) => [d.seq, d.v])).toEqual([[1, 1], [2, 1], [3, 1], [4, 1], [5, 2], [6, 2], [7, 2]]);
    expect(docs[4]!.prevHash).toBe(docs[3]!.hash);
    const v = await s.verify();
    expect(v).toMatchObject({ ok: true, checked: 7, unkeyedThrough: 4, lastSeq: 7 });
    expect(v.keyedSince!.getTime()).toBe(started + MINUTE); // the first start with keys: its first entry
    // A legacy entry altered is still found, as before.
    await audit().updateOne({ seq: 2 }, { $set: { outcome: "FORBIDDEN" } });
    expect((await s.verify()).broken).toMatchObject({ problem: "ALTERED", seq: 2 });
  });

  it("cannot be used to pass a rewrite off as legacy: unkeyed entries from where keys began are UNKEYED", async () => {
    await legacyChain(4);
    const s = service();
    await write(s, 5, 8);
    // Rewritten from a legacy entry on, all unkeyed, the head record unsigned: the head names an entry past where keys began.
    await rewriteTail(3, unkeyed, auditHash, () => ({}));
    expect((await s.verify()).broken).toMatchObject({ problem: "UNKEYED", seq: 8 });
    // With the head record out of the way, the first rewritten entry past where keys began.
    await chain().deleteOne({ _id: "head" });
    expect((await s.verify()).broken).toMatchObject({ problem: "UNKEYED", seq: 5 });
  });
});

describe("key rotation", () => {
  it("entries of the old key verify when it is listed in KAIROS_AUDIT_PREVIOUS_KEYS; otherwise UNKNOWN_KEY names the setting", async () => {
    // First keyed from the JWT secret (KAIROS_AUDIT_KEY unset), then KAIROS_AUDIT_KEY set, the JWT secret listed as previous.
    const jwt = "the-jwt-secret-of-this-deployment-32-chars";
    const newKey = "a-dedicated-audit-key-of-at-least-32-chars";
    const before = service(jwt);
    await write(before, 1, 3);
    const after = service(jwt, [jwt], newKey);
    expect(after.keyId).not.toBe(before.keyId);
    await write(after, 4, 6);
    const docs = await entries();
    expect(docs.map((d) => d.keyId)).toEqual([before.keyId, before.keyId, before.keyId, after.keyId, after.keyId, after.keyId]);
    expect(await after.verify()).toMatchObject({ ok: true, checked: 6, unkeyedThrough: 0 });
    // The old key not listed: the records and entries it signed cannot be checked.
    const v = await service(jwt, [], newKey).verify();
    expect(v.broken).toMatchObject({ problem: "UNKNOWN_KEY" });
    expect(v.broken!.detail).toContain(before.keyId);
  });
});
