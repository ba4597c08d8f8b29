/**
 * Archived logs over the real API, executor and the embedded S3: the log is archived when the run
 * ends (gzip, downloadable through logUrl), the live copy dropped, logs(...) still reads it; the
 * retention deletes it and says why; a zombie's chunks are refused.
 */
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { LogArchiver, LogWriter, logBlobs } from "../../src/core/index.js";
import { silentLogger } from "../../src/support/log.js";
import { useTestApp } from "../helpers/app.js";
import { gql, gqlOk, waitFor } from "../helpers/graphql.js";
import { finishedRun } from "../helpers/job-runs.js";
import { CHUNK_FIELDS, contiguous, runCommand, runOf, type Chunk } from "./helpers.js";
import { makeUser } from "../helpers/accounts.js";

const t = useTestApp({ env: { KAIROS_LOG_ARCHIVE_SWEEP: "PT0.2S", KAIROS_LOG_FLUSH: "PT0.1S" } });

const LINES = Array.from({ length: 300 }, (_, i) => `line ${i} ${"é".repeat(i % 7)}`);
const SCRIPT = `i=0; while [ $i -lt 300 ]; do r=$((i % 7)); s=""; while [ $r -gt 0 ]; do s="\${s}é"; r=$((r-1)); done; if [ $((i % 3)) -eq 0 ]; then echo "line $i $s" >&2; else echo "line $i $s"; fi; i=$((i+1)); done`;

type Q = { run: { logs: Chunk[]; logUrl: string | null; logStatus: { state: string; bytes: number; reason: string | null; expiresAt: string | null } | null } };
const QUERY = `query($id: ID!, $offset: Int) { run(id: $id) { logs(offset: $offset, limit: 1000) { ${CHUNK_FIELDS} } logUrl logStatus { state bytes reason expiresAt } } }`;

describe("archived logs", () => {
  it("archives the log when the run ends: logUrl downloads the full gzip, logs(...) still reads it, the live copy is dropped", async () => {
    const jobId = await runCommand(t.app.url, t.admin, SCRIPT);
    const run = await runOf(t.app.url, t.admin, jobId);
    expect((await finishedRun(t.app.url, t.admin, jobId)).status).toBe("SUCCEEDED");
    const d = await waitFor(async () => {
      const r = await gqlOk<Q>(t.app.url, QUERY, { id: run.id }, t.admin);
      return r.run.logStatus?.state === "ARCHIVED" ? r : null;
    }, 15_000);
    const full = LINES.join("\n") + "\n";
    expect(d.run.logStatus!.bytes).toBe(Buffer.byteLength(full));
    expect(d.run.logStatus!.reason).toBeNull();
    expect(new Date(d.run.logStatus!.expiresAt!).getTime()).toBeGreaterThan(Date.now() + 29 * 86_400_000);
    // The download: the gzip of the whole log, in order.
    expect(d.run.logUrl).toMatch(/^http/);
    const res = await fetch(d.run.logUrl!);
    expect(res.status).toBe(200);
    const gz = Buffer.from(await res.arrayBuffer());
    expect(gz[0]).toBe(0x1f);
    const text = gunzipSync(gz).toString("utf8");
    // logs(...) reads the archive: the same text, each stream's lines in order and tagged. (stdout
    // and stderr are two pipes: between them, the order is the order the executor read them.)
    expect(contiguous(d.run.logs)).toBe(text);
    expect(text.split("\n").filter(Boolean).sort()).toEqual([...LINES].sort());
    const linesOf = (stream: string) => d.run.logs.filter((c) => c.stream === stream).map((c) => c.data).join("").split("\n").filter(Boolean);
    expect(linesOf("STDERR")).toEqual(LINES.filter((_, i) => i % 3 === 0));
    expect(linesOf("STDOUT")).toEqual(LINES.filter((_, i) => i % 3 !== 0));
    const from = Buffer.byteLength(text.slice(0, text.length >> 1));
    const later = await gqlOk<Q>(t.app.url, QUERY, { id: run.id, offset: from }, t.admin);
    expect(contiguous(later.run.logs, from)).toBe(Buffer.from(text).subarray(from).toString("utf8"));
    // The live copy is gone.
    expect(await t.app.services.mongo.c.runLogs.countDocuments({ runId: run.id })).toBe(0);
    // Another user gets neither the log nor the link.
    const eve = await makeUser(t.app, t.admin, `eve-${Date.now()}`);
    const denied = await gql(t.app.url, `query($id: ID!) { run(id: $id) { logUrl } }`, { id: run.id }, eve.token);
    expect(denied.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    expect(JSON.stringify(denied)).not.toContain("http");

    // The retention: an archiver whose clock is past the expiry deletes it and says why.
    const blobs = logBlobs(t.app.services.blobs!);
    const archiver = new LogArchiver({ mongo: t.app.services.mongo, blobs, clock: () => Date.now() + 31 * 86_400_000, log: silentLogger(), settings: t.app.config.logs });
    const swept = await archiver.sweep();
    expect(swept.expired).toBeGreaterThanOrEqual(1);
    const gone = await gqlOk<{ run: { logUrl: string | null; logStatus: { state: string; reason: string } } }>(t.app.url, `query($id: ID!) { run(id: $id) { logUrl logStatus { state reason } } }`, { id: run.id }, t.admin);
    expect(gone.run.logUrl).toBeNull();
    expect(gone.run.logStatus.state).toBe("EXPIRED");
    expect(gone.run.logStatus.reason).toMatch(/KAIROS_LOG_RETENTION/);
    expect((await fetch(d.run.logUrl!)).status).toBe(404);
    const read = await gql(t.app.url, QUERY, { id: run.id }, t.admin);
    expect(read.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    expect(read.errors?.[0]?.message).toMatch(/KAIROS_LOG_RETENTION/);
  });

  it("refuses a zombie attempt's chunks: only the claim that holds the run writes its log", async () => {
    const jobId = await runCommand(t.app.url, t.admin, "echo mine");
    const run = await runOf(t.app.url, t.admin, jobId);
    await finishedRun(t.app.url, t.admin, jobId);
    const doc = (await t.app.services.mongo.c.runs.findOne({ _id: run.id }))!;
    const writer = new LogWriter({ mongo: t.app.services.mongo, bus: t.app.services.state.bus, clock: Date.now });
    const batch = (token: number, nodeId = "zombie-node") => ({
      runId: run.id, attempt: doc.attempt, token, nodeId, chunks: [{ offset: 0, size: 7, stream: "STDOUT" as const, data: "zombie\n" }], bytes: 7, truncated: false, ended: true,
    });
    // An older claim (its lease ran out and the run was claimed again): refused.
    const refused = await writer.write([batch(doc.fencingToken - 1)]);
    expect(refused.has(`${run.id}:${doc.fencingToken - 1}`)).toBe(true);
    // A claim the run never had: refused.
    expect((await writer.write([batch(doc.fencingToken + 3)])).size).toBe(1);
    // The current claim's log, written by another node: refused.
    expect((await writer.write([batch(doc.fencingToken, "another-node")])).size).toBe(1);
    expect(await t.app.services.mongo.c.runLogs.countDocuments({ runId: run.id, data: "zombie\n" })).toBe(0);
    // A run handed back to the queue refuses its old claim's late chunks.
    await t.app.services.mongo.c.runs.updateOne({ _id: run.id }, { $set: { status: "QUEUED" } });
    expect((await writer.write([batch(doc.fencingToken)])).size).toBe(1);
    // ... and takes those of the claim that took it from the queue (before its confirm lands).
    const nodeId = (await t.app.services.mongo.c.runLogSegments.findOne({ runId: run.id }))?.nodeId ?? "n";
    expect((await writer.write([{ ...batch(doc.fencingToken + 1, nodeId), chunks: [{ offset: 0, size: 4, stream: "STDOUT" as const, data: "new\n" }], bytes: 4 }])).size).toBe(0);
  });
});
