/** Signing secrets: made once, rotated with the previous one signing for a day, never two current at once. */
import { describe, expect, it } from "vitest";
import { HttpSigning, PREVIOUS_SECRET_GRACE_MS } from "../../src/core/http-signing.js";
import { useEmulatedMongo } from "../helpers/mongo.js";

const m = useEmulatedMongo("http_signing");

async function user(id: string): Promise<void> {
  const now = new Date();
  await m.mongo.c.users.insertOne({ _id: id, username: id, passwordHash: "-", role: "USER", maxConcurrentRuns: null, createdAt: now, updatedAt: now });
}

describe("HttpSigning", () => {
  it("makes a secret on first use, and keeps it", async () => {
    await user("u1");
    let now = 1_000_000;
    const s = new HttpSigning({ mongo: m.mongo, clock: () => now });
    const first = await s.secretsFor("u1");
    expect(first).toHaveLength(1);
    expect(first[0]).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    now += 10_000;
    expect(await new HttpSigning({ mongo: m.mongo, clock: () => now }).secretsFor("u1")).toEqual(first);
  });

  it("after a rotation signs with the new and the previous secret until the grace ends", async () => {
    await user("u2");
    let now = 2_000_000;
    const s = new HttpSigning({ mongo: m.mongo, clock: () => now });
    const [old] = await s.secretsFor("u2");
    const rotated = await s.rotate("u2");
    expect(rotated.current).not.toBe(old);
    expect(rotated.previous).toBe(old);
    expect(rotated.previousUntil!.getTime()).toBe(now + PREVIOUS_SECRET_GRACE_MS);
    expect(await s.secretsFor("u2")).toEqual([rotated.current, old]);
    now += PREVIOUS_SECRET_GRACE_MS + 1;
    expect(await s.secretsFor("u2")).toEqual([rotated.current]);
  });

  it("refuses to sign for a user that does not exist", async () => {
    const s = new HttpSigning({ mongo: m.mongo, clock: () => 0 });
    await expect(s.secretsFor("nobody")).rejects.toThrow(/user nobody not found/);
  });
});
