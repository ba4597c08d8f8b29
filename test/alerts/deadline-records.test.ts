/**
 * The deadline records a fire writes (store/alerts/deadlines.ts): one insert shared by the fires of
 * the same moment, insert-once by id, and a replayed fire told what is stored (a deadline decided
 * already stays DONE, so it is not armed again).
 */
import { describe, expect, it } from "vitest";
import { createDeadlineBatch, recordDeadlines, type AlertDeadlineDoc } from "../../src/store/alerts/deadlines.js";
import { useEmulatedMongo } from "../helpers/mongo.js";

const db = useEmulatedMongo("deadline-records");

function deadline(rule: string, key: string, over: Partial<AlertDeadlineDoc> = {}): AlertDeadlineDoc {
  const slotAt = new Date("2026-01-01T10:00:00Z");
  return {
    _id: `${rule}|${key}`, ruleId: rule, ownerId: "u1", jobId: "j1", jobName: "nightly", fireKey: key, runId: null,
    slotAt, dueAt: new Date(slotAt.getTime() + 60_000), shard: 3, state: "ARMED", createdAt: new Date(), ...over,
  };
}

describe("recordDeadlines", () => {
  it("records new deadlines and answers those recorded before as stored, in the order given", async () => {
    const { mongo } = db;
    const batch = createDeadlineBatch(mongo);
    // A deadline decided before (DONE) and one still armed with a due time of its own.
    await recordDeadlines(mongo, batch, [deadline("r1", "j1@1", { state: "DONE" }), deadline("r2", "j1@1", { dueAt: new Date("2026-01-01T11:00:00Z") })]);
    const replay = [deadline("r1", "j1@1"), deadline("r3", "j1@1"), deadline("r2", "j1@1")];
    const stored = await recordDeadlines(mongo, batch, replay);
    expect(stored.map((d) => [d._id, d.state])).toEqual([
      ["r1|j1@1", "DONE"],
      ["r3|j1@1", "ARMED"],
      ["r2|j1@1", "ARMED"],
    ]);
    expect(stored[2]!.dueAt.toISOString()).toBe("2026-01-01T11:00:00.000Z");
    expect(await mongo.db.collection("alertDeadlines").countDocuments()).toBe(3);
  });

  it("fires of the same moment share the insert, each told only of its own documents", async () => {
    const { mongo } = db;
    const batch = createDeadlineBatch(mongo);
    await recordDeadlines(mongo, batch, [deadline("r9", "j2@1", { state: "DONE" })]);
    const [a, b] = await Promise.all([
      recordDeadlines(mongo, batch, [deadline("r9", "j2@1"), deadline("r9", "j2@2")]),
      recordDeadlines(mongo, batch, [deadline("r8", "j2@1")]),
    ]);
    expect(a!.map((d) => d.state)).toEqual(["DONE", "ARMED"]);
    expect(b!.map((d) => d._id)).toEqual(["r8|j2@1"]);
    expect(await mongo.db.collection("alertDeadlines").countDocuments({ ruleId: { $in: ["r8", "r9"] } })).toBe(3);
  });
});
