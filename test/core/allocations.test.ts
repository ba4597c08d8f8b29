/** store/runs/allocations.ts: which RUNNING runs `resources(nodeId, …)` lists. */
import { describe, expect, it } from "vitest";
import type { RunDoc } from "../../src/domain/documents.js";
import { findRunningRuns } from "../../src/store/runs/allocations.js";
import { useEmulatedMongo } from "../helpers/mongo.js";

const store = useEmulatedMongo("allocations");

function run(id: string, nodeId: string | null, ownerId: string, status: RunDoc["status"] = "RUNNING"): Partial<RunDoc> {
  return { _id: id, fireKey: `job@${id}`, nodeId, ownerId, status, startedAt: new Date(Number(id.replace(/\D/g, ""))), spec: { resources: { cpu: 1, memoryMb: 64, pids: 16, diskMb: 8 } } as RunDoc["spec"] };
}

describe("running runs as allocations", () => {
  it("lists one node's runs when a node is named, every node's otherwise, and only RUNNING ones on a node", async () => {
    const { mongo } = store;
    await mongo.c.runs.insertMany([
      run("r1", "node-a", "u1"),
      run("r2", "node-b", "u1"),
      run("r3", "node-a", "u2"),
      run("r4", null, "u1"),
      run("r5", "node-a", "u1", "SUCCEEDED"),
    ] as RunDoc[]);
    const ids = (rs: Array<{ _id: string }>) => rs.map((r) => r._id).sort();
    expect(ids(await findRunningRuns(mongo, { nodeId: "node-a", ownerId: null }, null, 10))).toEqual(["r1", "r3"]);
    expect(ids(await findRunningRuns(mongo, { nodeId: "node-a", ownerId: "u1" }, null, 10))).toEqual(["r1"]);
    expect(ids(await findRunningRuns(mongo, { ownerId: null }, null, 10))).toEqual(["r1", "r2", "r3"]);
    expect(ids(await findRunningRuns(mongo, { nodeId: "node-c", ownerId: null }, null, 10))).toEqual([]);
  });
});
