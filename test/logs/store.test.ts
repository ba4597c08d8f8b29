/**
 * The log store without the API: archiving survives a crash anywhere between a run's end and its
 * archive; a silent log of a dead attempt is archived once its run moved on; the retention TTLs
 * follow the settings; an executor's output is written in one batch per flush, whatever the number
 * of runs printing.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_LOG_SETTINGS, LogArchiver, LogReads, LogWriter, type LogBatch, type LogBlobs } from "../../src/core/logs/index.js";
import { createMemorySharedState } from "../../src/shared-state/index.js";
import { applyRetention } from "../../src/store/index.js";
import { silentLogger } from "../../src/support/log.js";
import { LogShipper } from "../../src/executor/log-capture.js";
import { useEmulatedMongo } from "../helpers/mongo.js";
import { queuedRunDoc } from "../helpers/runs.js";

const db = useEmulatedMongo("logs-store");
const bus = createMemorySharedState({ shardCount: 1 }).bus;

function memoryBlobs(): LogBlobs & { objects: Map<string, Buffer> } {
  const objects = new Map<string, Buffer>();
  return {
    objects,
    put: async (key, body) => void objects.set(key, body),
    get: async (key) => objects.get(key) ?? null,
    delete: async (key) => void objects.delete(key),
    presignGet: async (key) => `memory://${key}`,
  };
}

const batch = (runId: string, token: number, text: string, at: number, ended: boolean): LogBatch => ({
  runId, attempt: 1, token, nodeId: "node-a", chunks: [{ offset: at, size: Buffer.byteLength(text), stream: "STDOUT", data: text }], bytes: at + Buffer.byteLength(text), truncated: false, ended,
});

describe("log store", () => {
  it("archives an ended log that nobody nudged (the executor died after the run ended)", async () => {
    const { mongo } = db;
    const run = queuedRunDoc("u1", { status: "SUCCEEDED", fencingToken: 3, finishedAt: new Date() });
    await mongo.c.runs.insertOne(run);
    const writer = new LogWriter({ mongo, bus, clock: Date.now });
    expect((await writer.write([batch(run._id, 3, "one\n", 0, false)])).size).toBe(0);
    expect((await writer.write([batch(run._id, 3, "two\n", 4, true)])).size).toBe(0);
    const blobs = memoryBlobs();
    const archiver = new LogArchiver({ mongo, blobs, clock: Date.now, log: silentLogger(), settings: DEFAULT_LOG_SETTINGS });
    expect((await archiver.sweep()).archived).toBe(1);
    const seg = await mongo.c.runLogSegments.findOne({ runId: run._id });
    expect(seg?.state).toBe("ARCHIVED");
    expect(await mongo.c.runLogs.countDocuments({ runId: run._id })).toBe(0);
    const reads = new LogReads({ mongo, blobs, settings: DEFAULT_LOG_SETTINGS });
    const chunks = await reads.readSegment(seg!, 0, 10);
    expect(chunks.map((c) => c.data).join("")).toBe("one\ntwo\n");
    // A second sweep finds nothing to do.
    expect(await archiver.sweep()).toEqual({ archived: 0, expired: 0 });
  });

  it("leaves a silent log alone while its attempt runs; archives it once the run moved on (the attempt died)", async () => {
    const { mongo } = db;
    const run = queuedRunDoc("u1", { status: "RUNNING", fencingToken: 4 });
    await mongo.c.runs.insertOne(run);
    const writer = new LogWriter({ mongo, bus, clock: Date.now });
    await writer.write([batch(run._id, 4, "partial\n", 0, false)]);
    const blobs = memoryBlobs();
    const later = Date.now() + DEFAULT_LOG_SETTINGS.silentMs + 1_000;
    const archiver = new LogArchiver({ mongo, blobs, clock: () => later, log: silentLogger(), settings: DEFAULT_LOG_SETTINGS });
    expect((await archiver.sweep()).archived).toBe(0);
    // The reaper re-queued it and another claim took it: the old log is complete as it is.
    await mongo.c.runs.updateOne({ _id: run._id }, { $set: { status: "RUNNING", fencingToken: 5 } });
    expect((await archiver.sweep()).archived).toBe(1);
    expect([...blobs.objects.keys()].some((k) => k.endsWith(`${run._id}/1.4.log.gz`))).toBe(true);
  });

  it("takes over a log whose archiver died while holding it", async () => {
    const { mongo } = db;
    const run = queuedRunDoc("u1", { status: "FAILED", fencingToken: 6, finishedAt: new Date() });
    await mongo.c.runs.insertOne(run);
    await new LogWriter({ mongo, bus, clock: Date.now }).write([batch(run._id, 6, "x\n", 0, true)]);
    // An archiver took it and died before writing anything.
    await mongo.c.runLogSegments.updateOne({ runId: run._id }, { $set: { state: "ARCHIVING", lockUntil: new Date(Date.now() + 60_000) } });
    const blobs = memoryBlobs();
    const now = new LogArchiver({ mongo, blobs, clock: Date.now, log: silentLogger(), settings: DEFAULT_LOG_SETTINGS });
    expect((await now.sweep()).archived).toBe(0);
    const afterHold = new LogArchiver({ mongo, blobs, clock: () => Date.now() + 61_000, log: silentLogger(), settings: DEFAULT_LOG_SETTINGS });
    expect((await afterHold.sweep()).archived).toBe(1);
  });

  it("sets the retention TTL indexes from the settings, and changes them when the settings change", async () => {
    const { mongo } = db;
    const ttl = async (coll: "runs" | "fires" | "runLogs" | "runLogSegments", name: string) =>
      (await mongo.c[coll].listIndexes().toArray()).find((i) => i.name === name)?.expireAfterSeconds;
    await applyRetention(mongo, { runs: 5 * 365 * 86_400, fires: 90 * 86_400, logs: 30 * 86_400 });
    expect(await ttl("runs", "finished_ttl")).toBe(5 * 365 * 86_400);
    expect(await ttl("fires", "recordedAt_ttl")).toBe(90 * 86_400);
    expect(await ttl("runLogs", "at_ttl")).toBe(30 * 86_400);
    expect(await ttl("runLogSegments", "lastWrite_ttl")).toBe(5 * 365 * 86_400);
    await applyRetention(mongo, { runs: 400 * 86_400, fires: 7 * 86_400, logs: 86_400 });
    expect(await ttl("runs", "finished_ttl")).toBe(400 * 86_400);
    expect(await ttl("fires", "recordedAt_ttl")).toBe(7 * 86_400);
    expect(await ttl("runLogs", "at_ttl")).toBe(86_400);
  });

  it("writes the output of many printing attempts in one batch per flush", async () => {
    const calls: LogBatch[][] = [];
    const writer = { write: async (b: LogBatch[]) => (calls.push(b), new Set<string>()) } as unknown as LogWriter;
    const shipper = new LogShipper({ writer, nodeId: "n", log: silentLogger(), settings: { ...DEFAULT_LOG_SETTINGS, flushMs: 60_000 } });
    const captures = Array.from({ length: 100 }, (_, i) => shipper.open(`run-${i}`, 1, 1));
    for (let line = 0; line < 50; line++) {
      for (const c of captures) c.write(Buffer.from(`line ${line}\n`), line % 5 === 0 ? "stderr" : "stdout");
    }
    await shipper.flush();
    expect(calls).toHaveLength(1);
    expect(calls[0]).toHaveLength(100);
    // Consecutive output of one stream is one chunk: 10 stderr lines between stdout runs → 20 chunks.
    expect(calls[0]![0]!.chunks).toHaveLength(20);
    const text = calls[0]![0]!.chunks.map((c) => c.data).join("");
    expect(text).toBe(Array.from({ length: 50 }, (_, l) => `line ${l}\n`).join(""));
    await shipper.stop();
  });

  it("a flush asked while one is in flight resolves once what was pending at the call is written", async () => {
    const calls: LogBatch[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const writer = {
      write: async (b: LogBatch[]) => {
        calls.push(b);
        if (calls.length === 1) await gate;
        return new Set<string>();
      },
    } as unknown as LogWriter;
    const shipper = new LogShipper({ writer, nodeId: "n", log: silentLogger(), settings: { ...DEFAULT_LOG_SETTINGS, flushMs: 60_000 } });
    const c = shipper.open("run-f", 1, 1);
    c.write(Buffer.from("first\n"), "stdout");
    const first = shipper.flush();
    c.write(Buffer.from("last\n"), "stdout");
    c.end();
    const second = shipper.flush();
    let secondDone = false;
    void second.then(() => (secondDone = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(secondDone).toBe(false); // waits behind the one in flight
    release();
    await Promise.all([first, second]);
    expect(calls).toHaveLength(2);
    expect(calls[1]![0]).toMatchObject({ ended: true, chunks: [{ offset: 6, data: "last\n" }] });
    await shipper.stop();
  });

  it("caps a log: keeps what fits whole (no cut character), marks the cut, counts the rest", async () => {
    const calls: LogBatch[][] = [];
    const writer = { write: async (b: LogBatch[]) => (calls.push(b), new Set<string>()) } as unknown as LogWriter;
    const shipper = new LogShipper({ writer, nodeId: "n", log: silentLogger(), settings: { ...DEFAULT_LOG_SETTINGS, maxBytes: 1_024, flushMs: 60_000 } });
    const c = shipper.open("run-cap", 1, 1);
    c.write(Buffer.from("é".repeat(1_000)), "stdout"); // 2,000 bytes
    c.write(Buffer.from("more\n"), "stderr");
    c.end();
    await shipper.flush();
    const chunks = calls.flat().flatMap((b) => b.chunks);
    const out = chunks.filter((x) => x.stream === "STDOUT");
    expect(out.map((x) => x.data).join("")).toBe("é".repeat(512));
    const system = chunks.filter((x) => x.stream === "SYSTEM").map((x) => x.data).join("");
    expect(system).toContain("output truncated");
    expect(system).toContain("981 more bytes of output were dropped");
    expect(calls.flat().at(-1)).toMatchObject({ truncated: true, ended: true });
    // Offsets are contiguous byte offsets.
    let at = 0;
    for (const x of chunks) {
      expect(x.offset).toBe(at);
      at += x.size;
    }
    await shipper.stop();
  });
});
