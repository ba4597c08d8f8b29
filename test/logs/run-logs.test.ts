/**
 * Run logs over the real API and executor: live output over `runLogs` while the run goes, a
 * reconnect from an offset, stdout/stderr tagged in order, the cap's marker, `logs(...)` during and
 * after the run, and another user's refusal.
 */
import { describe, expect, it } from "vitest";
import { makeUser } from "../helpers/accounts.js";
import { useTestApp } from "../helpers/app.js";
import { gql, gqlOk, waitFor, wsClient } from "../helpers/graphql.js";
import { finishedRun } from "../helpers/job-runs.js";
import { CHUNK_FIELDS, contiguous, follow, runCommand, runOf, runStatus, type Chunk } from "./helpers.js";

const t = useTestApp({ env: { KAIROS_LOG_MAX_BYTES: "4096", KAIROS_LOG_FLUSH: "PT0.1S" } });

/** Prints `n` numbered lines, one every 0.2 s, odd ones on stderr. */
const ticker = (n: number) => `i=1; while [ $i -le ${n} ]; do if [ $((i % 2)) -eq 1 ]; then echo "err $i" >&2; else echo "out $i"; fi; sleep 0.2; i=$((i+1)); done`;
const expected = (n: number) => Array.from({ length: n }, (_, k) => (k % 2 === 0 ? `err ${k + 1}\n` : `out ${k + 1}\n`)).join("");

/** What a run and its log say about lost output, once the log is complete. */
async function truncation(runId: string): Promise<{ outputTruncated: boolean; logStatus: { truncated: boolean } }> {
  type R = { run: { outputTruncated: boolean; logStatus: { truncated: boolean; ended: boolean } } };
  const r = await waitFor(async () => {
    const d = await gqlOk<R>(t.app.url, `query($id: ID!) { run(id: $id) { outputTruncated logStatus { truncated ended } } }`, { id: runId }, t.admin);
    return d.run.logStatus?.ended ? d : null;
  }, 10_000);
  return { outputTruncated: r.run.outputTruncated, logStatus: { truncated: r.run.logStatus.truncated } };
}

describe("run logs", () => {
  it("streams a run's output in order while it runs, tagged by stream, and ends with the run", async () => {
    const jobId = await runCommand(t.app.url, t.admin, ticker(12));
    const run = await runOf(t.app.url, t.admin, jobId);
    const client = wsClient(t.app.wsUrl, t.admin);
    try {
      let firstAt = 0;
      const r = await follow(client, { runId: run.id }, () => false, () => {
        firstAt ||= Date.now();
      });
      expect(r.errors).toEqual([]);
      expect(r.completed).toBe(true);
      // The first chunk came while the run was still going (its program prints for 2.4 s).
      const d = await gqlOk<{ run: { finishedAt: string } }>(t.app.url, `query($id: ID!) { run(id: $id) { finishedAt } }`, { id: run.id }, t.admin);
      expect(firstAt).toBeGreaterThan(0);
      expect(new Date(d.run.finishedAt).getTime() - firstAt).toBeGreaterThan(1_000);
      expect(contiguous(r.chunks)).toBe(expected(12));
      for (const c of r.chunks) {
        expect(c.runId).toBe(run.id);
        expect(c.attempt).toBe(1);
        expect(c.stream).toBe(c.data.startsWith("err") ? "STDERR" : "STDOUT");
      }
      // Interleaved: the streams alternate through the log.
      expect(new Set(r.chunks.map((c) => c.stream))).toEqual(new Set(["STDOUT", "STDERR"]));
    } finally {
      await client.dispose();
    }
    const done = await finishedRun(t.app.url, t.admin, jobId);
    expect(done.status).toBe("SUCCEEDED");
  });

  it("resumes after a reconnect from the last offset with nothing missed or repeated", async () => {
    const jobId = await runCommand(t.app.url, t.admin, ticker(14));
    const run = await runOf(t.app.url, t.admin, jobId);
    const client = wsClient(t.app.wsUrl, t.admin);
    try {
      const first = await follow(client, { runId: run.id }, (cs) => contiguous(cs).includes("out 4"));
      expect(first.completed).toBe(false);
      expect(await runStatus(t.app.url, t.admin, run.id)).toBe("RUNNING");
      const last = first.chunks[first.chunks.length - 1]!;
      const rest = await follow(client, { runId: run.id, token: last.token, fromOffset: last.offset + last.size });
      expect(rest.errors).toEqual([]);
      expect(rest.completed).toBe(true);
      expect(contiguous(first.chunks) + contiguous(rest.chunks, last.offset + last.size)).toBe(expected(14));
      // A reconnect from inside a chunk gets the rest of that chunk.
      const mid = await follow(client, { runId: run.id, token: last.token, fromOffset: 3 });
      expect(contiguous(mid.chunks, 3)).toBe(expected(14).slice(3));
    } finally {
      await client.dispose();
    }
  });

  it("reads logs(offset, limit) during and after the run", async () => {
    const jobId = await runCommand(t.app.url, t.admin, ticker(10));
    const run = await runOf(t.app.url, t.admin, jobId);
    const q = `query($id: ID!, $offset: Int, $limit: Int) { run(id: $id) { status logs(offset: $offset, limit: $limit) { ${CHUNK_FIELDS} } logStatus { state bytes ended truncated } } }`;
    type R = { run: { status: string; logs: Chunk[]; logStatus: { state: string; bytes: number; ended: boolean; truncated: boolean } | null } };
    const during = await waitFor(async () => {
      const d = await gqlOk<R>(t.app.url, q, { id: run.id }, t.admin);
      return d.run.status === "RUNNING" && d.run.logs.length > 0 ? d : null;
    }, 10_000);
    expect(expected(10).startsWith(contiguous(during.run.logs))).toBe(true);
    await finishedRun(t.app.url, t.admin, jobId);
    // The whole log is stored before the run's result: read at once, it is complete.
    const after = await gqlOk<R>(t.app.url, q, { id: run.id }, t.admin);
    expect(after.run.logStatus?.ended).toBe(true);
    expect(contiguous(after.run.logs)).toBe(expected(10));
    expect(after.run.logStatus!.bytes).toBe(Buffer.byteLength(expected(10)));
    // Paged: one chunk at a time from an offset.
    const page = await gqlOk<R>(t.app.url, q, { id: run.id, offset: 6, limit: 1 }, t.admin);
    expect(page.run.logs).toHaveLength(1);
    expect(page.run.logs[0]!.offset).toBe(6);
    expect(expected(10).slice(6).startsWith(page.run.logs[0]!.data)).toBe(true);
    // Bad arguments are refused with what is allowed.
    for (const vars of [{ offset: -1 }, { limit: 0 }, { limit: 1001 }]) {
      const bad = await gql(t.app.url, q, { id: run.id, ...vars }, t.admin);
      expect(bad.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
      expect(bad.errors?.[0]?.message).toMatch(vars.offset !== undefined ? /offset: must be a byte offset/ : /limit: must be 1 to 1000 chunks/);
    }
    // A huge limit is priced by the query cost before it runs.
    const costly = await gql(t.app.url, q, { id: run.id, limit: 100_000 }, t.admin);
    expect(costly.errors?.[0]?.extensions?.code).toBe("GRAPHQL_VALIDATION_FAILED");
    expect(costly.errors?.[0]?.message).toMatch(/cost/i);
  });

  it("caps an attempt's log with a visible truncation marker; outputTail stays", async () => {
    const jobId = await runCommand(t.app.url, t.admin, `head -c 20000 /dev/zero | tr '\\0' 'x'; echo; echo done >&2`);
    const run = await runOf(t.app.url, t.admin, jobId);
    const done = await finishedRun(t.app.url, t.admin, jobId);
    expect(done.status).toBe("SUCCEEDED");
    expect(done.outputTail).toContain("done");
    type R = { run: { logs: Chunk[]; logStatus: { truncated: boolean; ended: boolean; bytes: number } } };
    const d = await waitFor(async () => {
      const r = await gqlOk<R>(t.app.url, `query($id: ID!) { run(id: $id) { logs(limit: 1000) { ${CHUNK_FIELDS} } logStatus { truncated ended bytes } } }`, { id: run.id }, t.admin);
      return r.run.logStatus?.ended ? r : null;
    }, 10_000);
    expect(d.run.logStatus.truncated).toBe(true);
    const text = contiguous(d.run.logs);
    expect(text.startsWith("x".repeat(4096))).toBe(true);
    const system = d.run.logs.filter((c) => c.stream === "SYSTEM").map((c) => c.data).join("");
    expect(system).toContain("output truncated");
    expect(system).toContain("KAIROS_LOG_MAX_BYTES");
    expect(system).toMatch(/\d+ more bytes of output were dropped/);
    expect(d.run.logs.filter((c) => c.stream !== "SYSTEM").reduce((n, c) => n + c.size, 0)).toBe(4096);
    expect(await truncation(run.id)).toEqual({ outputTruncated: true, logStatus: { truncated: true } });
  });

  it("says output was lost the same way on the run and on its log: past the log's cap, even when the tail holds it all", async () => {
    // 8,000 bytes: all of it in the 16 KiB outputTail, but past this app's 4 KiB log cap.
    const jobId = await runCommand(t.app.url, t.admin, `head -c 8000 /dev/zero | tr '\\0' 'y'`);
    const run = await runOf(t.app.url, t.admin, jobId);
    expect((await finishedRun(t.app.url, t.admin, jobId)).outputTail).toHaveLength(8000);
    expect(await truncation(run.id)).toEqual({ outputTruncated: true, logStatus: { truncated: true } });
    // Within the cap: nothing lost, on either.
    const small = await runCommand(t.app.url, t.admin, "echo small");
    const smallRun = await runOf(t.app.url, t.admin, small);
    await finishedRun(t.app.url, t.admin, small);
    expect(await truncation(smallRun.id)).toEqual({ outputTruncated: false, logStatus: { truncated: false } });
  });

  it("a run that prints nothing has no log; its stream completes without chunks", async () => {
    const jobId = await runCommand(t.app.url, t.admin, "true");
    const run = await runOf(t.app.url, t.admin, jobId);
    const client = wsClient(t.app.wsUrl, t.admin);
    try {
      const r = await follow(client, { runId: run.id }, () => false, () => undefined, 20_000);
      expect(r).toMatchObject({ chunks: [], errors: [], completed: true });
    } finally {
      await client.dispose();
    }
    const d = await gqlOk<{ run: { status: string; logs: Chunk[]; logUrl: string | null; logStatus: unknown } }>(t.app.url, `query($id: ID!) { run(id: $id) { status logs { data } logUrl logStatus { state } } }`, { id: run.id }, t.admin);
    expect(d.run).toEqual({ status: "SUCCEEDED", logs: [], logUrl: null, logStatus: null });
  });

  it("refuses a subscription's bad arguments before any chunk, saying what is allowed", async () => {
    const jobId = await runCommand(t.app.url, t.admin, "echo hi");
    const run = await runOf(t.app.url, t.admin, jobId);
    await finishedRun(t.app.url, t.admin, jobId);
    const client = wsClient(t.app.wsUrl, t.admin);
    try {
      const neg = await follow(client, { runId: run.id, fromOffset: -5 }, () => false, () => undefined, 5_000);
      expect(neg.chunks).toEqual([]);
      expect(JSON.stringify(neg.errors)).toMatch(/fromOffset: must be a byte offset/);
      const token = await follow(client, { runId: run.id, token: 999 }, () => false, () => undefined, 5_000);
      expect(JSON.stringify(token.errors)).toMatch(/has no log for token 999; its logs are for tokens: \d+ \(attempt 1\)/);
      const missing = await follow(client, { runId: "6b0000000000000000000000" }, () => false, () => undefined, 5_000);
      expect(JSON.stringify(missing.errors)).toContain("NOT_FOUND");
    } finally {
      await client.dispose();
    }
  });

  it("another user's run: logs, logUrl and the subscription answer NOT_FOUND", async () => {
    const jobId = await runCommand(t.app.url, t.admin, "echo secret-output");
    const run = await runOf(t.app.url, t.admin, jobId);
    await finishedRun(t.app.url, t.admin, jobId);
    const mallory = await makeUser(t.app, t.admin, `mallory-${Date.now()}`);
    const read = await gql(t.app.url, `query($id: ID!) { run(id: $id) { logs { data } logUrl } }`, { id: run.id }, mallory.token);
    expect(read.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    expect(JSON.stringify(read)).not.toContain("secret-output");
    const client = wsClient(t.app.wsUrl, mallory.token);
    try {
      const sub = await follow(client, { runId: run.id }, () => false, () => undefined, 5_000);
      expect(sub.chunks).toEqual([]);
      expect(JSON.stringify(sub.errors)).toContain("NOT_FOUND");
    } finally {
      await client.dispose();
    }
  });
});
