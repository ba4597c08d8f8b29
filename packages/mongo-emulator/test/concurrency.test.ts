/**
 * The claim that Kairos's executors rely on: 20 separate clients racing
 * findOneAndUpdate({_id, status: 'QUEUED'}, {$set: {status: 'RUNNING', owner}}) over the same
 * documents each win a document exactly once.
 */
import { MongoClient } from "mongodb";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openTarget, type Target } from "./target.js";

const CLIENTS = 20;
const DOCS = 200;

let t: Target;
beforeAll(async () => {
  t = await openTarget("concurrency");
});
afterAll(async () => {
  await t?.close();
});

function shuffled<T>(xs: T[], seed: number): T[] {
  const out = xs.slice();
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

it("each document is claimed by exactly one of 20 racing clients", async () => {
  const runs = t.db.collection<{ _id: number; status: string; owner?: number }>("runs");
  await runs.insertMany(Array.from({ length: DOCS }, (_, i) => ({ _id: i, status: "QUEUED" })));
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => new MongoClient(t.uri, { maxPoolSize: 2 }).connect()));
  try {
    const wins = await Promise.all(
      clients.map(async (client, owner) => {
        const coll = client.db(t.db.databaseName).collection<{ _id: number; status: string; owner?: number }>("runs");
        const won: number[] = [];
        for (const _id of shuffled(
          Array.from({ length: DOCS }, (_, i) => i),
          owner + 1,
        )) {
          const before = await coll.findOneAndUpdate({ _id, status: "QUEUED" }, { $set: { status: "RUNNING", owner } });
          if (before) {
            expect(before.status).toBe("QUEUED");
            won.push(_id);
          }
        }
        return won;
      }),
    );
    const all = wins.flat();
    expect(all).toHaveLength(DOCS);
    expect(new Set(all).size).toBe(DOCS);
    const docs = await runs.find().toArray();
    expect(docs.every((d) => d.status === "RUNNING")).toBe(true);
    for (const [owner, won] of wins.entries()) {
      for (const id of won) expect(docs[id].owner).toBe(owner);
    }
    // More than one client won something: the race was real.
    expect(wins.filter((w) => w.length > 0).length).toBeGreaterThan(1);
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
});
