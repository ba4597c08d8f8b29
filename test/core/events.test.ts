/**
 * How a run crosses processes: as a status event on the bus (without its spec) and as a
 * ready-queue payload (with it). Decoding gives back the run as stored, nulls and instants included.
 */
import { describe, expect, it } from "vitest";
import { decodeRun, decodeRunEvents, decodeRunPayload, encodeRun, encodeRunPayload } from "../../src/core/events.js";
import type { RunDoc } from "../../src/domain/documents.js";
import { queuedRunDoc } from "../helpers/runs.js";

const at = (s: number) => new Date(Date.UTC(2026, 10, 22, 6, 0, s));

// Every instant, every kind of value a stored run has (the nulls of a run not started yet included).
const queued: RunDoc = queuedRunDoc("6740a1b2c3d4e5f601234500", {
  _id: "6740a1b2c3d4e5f601234567",
  jobName: "nightly",
  trigger: "SCHEDULE",
  scheduledFor: at(0),
  retry: { maxAttempts: 3, backoff: "EXPONENTIAL", initialMs: 1_000, factor: 2, maxMs: 60_000, jitter: "FULL", nonRetryableExitCodes: [2] },
  fencingToken: 4,
  spec: { kind: "COMMAND", command: null, argv: ["true"], env: { A: "1" }, timeoutMs: 60_000, pool: "default" },
  notBefore: at(0),
  queuedAt: at(-5),
  history: [{ status: "QUEUED", at: at(-5), reason: null, nodeId: null, attempt: 1 }],
  createdAt: at(-5),
  updatedAt: at(-5),
});

const finished: RunDoc = {
  ...queued,
  status: "FAILED",
  nodeId: "node-1",
  startedAt: at(0),
  finishedAt: at(2),
  exitCode: 1,
  signal: null,
  error: "exit code 1",
  outputTail: "boom\n",
  history: [...queued.history, { status: "RUNNING", at: at(0), reason: "claimed", nodeId: "node-1", attempt: null }],
};

describe("run encoding", () => {
  it("a payload decodes to the run as enqueued, spec, nulls and instants included", () => {
    expect(decodeRunPayload(encodeRunPayload(queued))).toEqual(queued);
    const { spec: _spec, ...event } = finished;
    expect(decodeRun(encodeRun(finished))).toEqual(event);
  });

  it("an event never carries the spec (which may hold secrets in its environment)", () => {
    const text = encodeRun({ ...queued, spec: { ...queued.spec, env: { TOKEN: "s3cret" } } });
    expect(text).not.toContain("s3cret");
    expect(decodeRunEvents(`[${text},${encodeRun(finished)}]`).map((e) => e.status)).toEqual(["QUEUED", "FAILED"]);
  });

  it("reads payloads written with ISO instants and every null spelled out", () => {
    const older = JSON.stringify(queued); // Date#toJSON: ISO strings
    expect(decodeRunPayload(older)).toEqual(queued);
  });

  it("refuses a payload that is not a run", () => {
    expect(() => decodeRunPayload(JSON.stringify({ _id: "x" }))).toThrow(/not a run payload/);
    expect(() => decodeRunPayload("not json")).toThrow();
  });
});
