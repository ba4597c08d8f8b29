/**
 * Executor node documents made directly in MongoDB, for tests that need many nodes (paging, names,
 * cluster figures) without starting executors: as an executor writes one at its start, with its
 * heartbeat an hour ahead so the reaper never marks it DEAD while the test runs.
 */
import type { NodeDoc } from "../../src/domain/index.js";

const FUTURE = new Date(Date.now() + 3_600_000);

export function nodeDoc(o: Pick<NodeDoc, "_id" | "name"> & Partial<NodeDoc>): NodeDoc {
  return {
    host: "test-host",
    pid: 1,
    pools: ["default"],
    labels: {},
    capacity: { slots: 1, cpus: 1, memoryMb: 512 },
    status: "ONLINE",
    running: 0,
    usage: { cpuPercent: 0, memoryMb: 0, load1: 0 },
    startedAt: new Date("2026-01-01T00:00:00Z"),
    lastHeartbeatAt: FUTURE,
    ...o,
  };
}
