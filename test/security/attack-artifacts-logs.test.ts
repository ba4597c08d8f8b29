/**
 * Attacks on artifacts and run logs (issue #16) by a hostile user, over the real API, executor and
 * the embedded S3. Only attacks that found a hole, or that pin a property no other test asserts.
 */
import { createHash } from "node:crypto";
import { chmod, lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { ArtifactCache } from "../../src/executor/index.js";
import { code, makeUser, message } from "../helpers/accounts.js";
import { useTestApp, type TestApp } from "../helpers/app.js";
import { gql, gqlOk, waitFor, wsClient } from "../helpers/graphql.js";
import { finishedRun } from "../helpers/job-runs.js";
import { CHUNK_FIELDS, contiguous, runCommand, runOf, type Chunk } from "../logs/helpers.js";

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

const CREATE = `mutation($name: String!, $size: Int!, $sha256: String!) {
  createArtifactUpload(name: $name, size: $size, sha256: $sha256) { artifact { id } uploadUrl }
}`;
const COMPLETE = `mutation($id: ID!) { completeArtifactUpload(id: $id) { id size sha256 status } }`;

async function create(app: TestApp, token: string, name: string, size: number, hash: string): Promise<{ id: string; uploadUrl: string }> {
  const d = await gqlOk<{ createArtifactUpload: { artifact: { id: string }; uploadUrl: string } }>(app.url, CREATE, { name, size, sha256: hash }, token);
  return { id: d.createArtifactUpload.artifact.id, uploadUrl: d.createArtifactUpload.uploadUrl };
}

async function upload(app: TestApp, token: string, bytes: Buffer): Promise<string> {
  const up = await create(app, token, "a.sh", bytes.length, sha256(bytes));
  expect((await fetch(up.uploadUrl, { method: "PUT", body: bytes })).status).toBe(200);
  await gqlOk(app.url, COMPLETE, { id: up.id }, token);
  return up.id;
}

async function objectBytes(app: TestApp, key: string): Promise<Buffer | null> {
  const body = await app.services.blobs!.get(key);
  if (!body) return null;
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c as Uint8Array));
  return Buffer.concat(chunks);
}

const t = useTestApp({ env: { KAIROS_LOG_FLUSH: "PT0.1S" } });

describe("attacks on artifacts", () => {

  it("a presigned PUT URL cannot be turned into a copy of another user's artifact (unsigned x-amz-copy-source)", async () => {
    const { app, admin } = t;
    const victim = await makeUser(app, admin, "copy-victim");
    const mallory = await makeUser(app, admin, "copy-mallory");
    const secret = Buffer.from("#!/bin/sh\nexport API_TOKEN=victims-secret-token-0123456789\n");
    const victimId = await upload(app, victim.token, secret);

    // Mallory's own upload URL, used with a header its signature does not cover.
    const up = await create(app, mallory.token, "x.sh", secret.length, "0".repeat(64));
    const bucket = new URL(up.uploadUrl).pathname.split("/")[1]!;
    const res = await fetch(up.uploadUrl, {
      method: "PUT",
      body: Buffer.alloc(secret.length),
      headers: { "x-amz-copy-source": `/${bucket}/artifacts/${victimId}` },
    });
    await res.arrayBuffer();
    // Without the check, s3rver copies the victim's bytes into Mallory's upload key, and completion's
    // refusal then tells her their sha256: with it, a second upload declaring that size and sha256
    // completes, and Mallory owns a copy of the victim's artifact (artifact ids are ObjectIds,
    // guessable from her own: the same process prefix, a counter).
    const landed = await objectBytes(app, `uploads/${up.id}`);
    expect(landed?.equals(secret) ?? false).toBe(false);
    const done = await gql(app.url, COMPLETE, { id: up.id }, mallory.token);
    expect(JSON.stringify(done)).not.toContain(sha256(secret));
    // S3 refuses x-amz-* headers a presigned URL does not sign (HeadersNotSigned); so must dev.
    expect(res.status).toBe(403);
  });

  it("a presigned URL works for its one key and method only", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "url-swap");
    const bytes = Buffer.from("echo mine\n");
    const theirs = await upload(app, (await makeUser(app, admin, "url-swap-victim")).token, Buffer.from("echo theirs\n"));
    const up = await create(app, user.token, "m.sh", bytes.length, sha256(bytes));
    const other = new URL(up.uploadUrl);
    other.pathname = other.pathname.replace(/uploads\/[^/]+$/, `artifacts/${theirs}`);
    expect((await fetch(other, { method: "PUT", body: bytes })).status).toBe(403);
    expect((await fetch(up.uploadUrl, { method: "GET" })).status).toBe(403);
    expect((await fetch(up.uploadUrl, { method: "DELETE" })).status).toBe(403);
    expect((await objectBytes(app, `artifacts/${theirs}`))!.toString()).toBe("echo theirs\n");
  });

  it("the executor's cache never hands out a link planted under a sha256 name, and refuses a directory others can write", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "cache-planter");
    const bytes = Buffer.from("#!/bin/sh\necho verified\n");
    const id = await upload(app, user.token, bytes);
    const ref = { id, sha256: sha256(bytes), size: bytes.length, blobKey: `artifacts/${id}` };
    const root = await mkdtemp(join(tmpdir(), "kairos-attack-cache-"));
    try {
      // Right bytes today behind a link whose target the planter can change after the check.
      const dir = join(root, "cache");
      await mkdir(dir, { mode: 0o755 });
      const target = join(root, "planted");
      await writeFile(target, bytes);
      await symlink(target, join(dir, ref.sha256));
      const path = await new ArtifactCache({ dir, blobs: app.services.blobs! }).fetch(ref);
      expect((await lstat(path)).isFile()).toBe(true);
      await writeFile(target, "echo swapped\n");
      expect((await readFile(path)).equals(bytes)).toBe(true);
      // A cache directory anyone can write (a /tmp name made first by someone else) is refused.
      const open = join(root, "open");
      await mkdir(open);
      await chmod(open, 0o777);
      await expect(new ArtifactCache({ dir: open, blobs: app.services.blobs! }).fetch(ref)).rejects.toThrow(/writable by no one else/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("many concurrent completeArtifactUpload calls of one upload read its bytes once (no memory amplification)", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "complete-flood");
    const bytes = Buffer.alloc(256 * 1024, 7);
    const up = await create(app, user.token, "big.bin", bytes.length, sha256(bytes));
    expect((await fetch(up.uploadUrl, { method: "PUT", body: bytes })).status).toBe(200);
    const blobs = app.services.blobs!;
    const spy = vi.spyOn(blobs, "get");
    try {
      const all = await Promise.all(Array.from({ length: 20 }, () => gql(app.url, COMPLETE, { id: up.id }, user.token)));
      for (const r of all) expect(r.data?.completeArtifactUpload?.status).toBe("COMPLETE");
      // Each read holds the whole object (up to 10 MiB) in the API's memory: 20 calls must not mean 20 copies.
      expect(spy.mock.calls.filter(([key]) => key === `uploads/${up.id}`).length).toBe(1);
    } finally {
      spy.mockRestore();
    }
  });

  it("names with C1 control characters, line separators or bidi overrides are refused; '.' and '..' too", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "artifact-names");
    const names = ["a\u009b2Jb.sh", "a\u0085b", "line\u2028break", "evil\u202Ehs.txt", "iso\u2066late", ".", ".."];
    for (const name of names) {
      const r = await gql(app.url, CREATE, { name, size: 1, sha256: "a".repeat(64) }, user.token);
      expect(code(r), JSON.stringify(name)).toBe("BAD_USER_INPUT");
      expect(message(r)).toMatch(/name:/);
    }
    // Ordinary non-ASCII names are fine.
    const ok = await gql(app.url, CREATE, { name: "rapport-été-日本.sh", size: 1, sha256: "a".repeat(64) }, user.token);
    expect(ok.errors).toBeUndefined();
    expect(await app.services.mongo.c.artifacts.countDocuments({ ownerId: user.id })).toBe(1);
  });

  it("a burst of concurrent createArtifactUpload calls cannot exceed the pending cap", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "pending-burst");
    const all = await Promise.all(Array.from({ length: 45 }, (_, i) => gql(app.url, CREATE, { name: `p${i}`, size: 1, sha256: "b".repeat(64) }, user.token)));
    const ok = all.filter((r) => !r.errors).length;
    expect(await app.services.mongo.c.artifacts.countDocuments({ ownerId: user.id, status: "PENDING" })).toBeLessThanOrEqual(20);
    expect(ok).toBeLessThanOrEqual(20);
    for (const r of all.filter((x) => x.errors)) expect(["RESOURCE_EXHAUSTED", "TOO_MANY_REQUESTS", "RATE_LIMITED"]).toContain(code(r));
  });

});

describe("attacks on run logs", () => {
  it("one user cannot open runLogs subscriptions without bound (each polls the store and holds chunks)", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "follower-flood");
    const jobId = await runCommand(app.url, user.token, "echo hello; sleep 40");
    const run = await runOf(app.url, user.token, jobId);
    const client = wsClient(app.wsUrl, user.token);
    const query = `subscription($runId: ID!) { runLogs(runId: $runId) { ${CHUNK_FIELDS} } }`;
    const open = () => {
      const s = { got: [] as Chunk[], errors: [] as string[], stop: () => undefined as void };
      s.stop = client.subscribe<{ runLogs: Chunk }>(
        { query, variables: { runId: run.id } },
        {
          next: (v) => {
            if (v.errors) s.errors.push(JSON.stringify(v.errors));
            if (v.data) s.got.push(v.data.runLogs);
          },
          error: (e) => void s.errors.push(JSON.stringify(e)),
          complete: () => undefined,
        },
      );
      return s;
    };
    try {
      const subs = Array.from({ length: 30 }, open);
      await waitFor(async () => (subs.every((s) => s.got.length > 0 || s.errors.length > 0) ? true : null), 20_000);
      const refused = subs.filter((s) => s.errors.length > 0);
      expect(subs.filter((s) => s.got.length > 0).length).toBe(20);
      expect(refused.length).toBe(10);
      expect(refused[0]!.errors[0]).toMatch(/runLogs subscriptions open/);
      expect(refused[0]!.errors[0]).toContain("RESOURCE_EXHAUSTED");
      // Closing some frees their places.
      for (const s of subs.filter((x) => x.got.length > 0).slice(0, 3)) s.stop();
      const again = await waitFor(async () => {
        const s = open();
        const r = await waitFor(async () => (s.got.length > 0 || s.errors.length > 0 ? s : null), 10_000);
        return r.got.length > 0 ? r : (s.stop(), null);
      }, 10_000);
      expect(again.got[0]!.data).toBe("hello\n");
    } finally {
      await client.dispose();
    }
  });

  it("one logs(...) read returns at most about 1 MiB, whatever its limit (the cost prices chunks, a chunk is up to 64 KiB)", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "log-hoarder");
    const total = 3 * 1024 * 1024;
    const jobId = await runCommand(app.url, user.token, `head -c ${total} /dev/zero | tr '\\0' 'x'`);
    const run = await runOf(app.url, user.token, jobId);
    await finishedRun(app.url, user.token, jobId);
    const q = `query($id: ID!, $offset: Int) { a: run(id: $id) { logs(offset: $offset, limit: 1000) { ${CHUNK_FIELDS} } logStatus { ended bytes } } }`;
    type R = { a: { logs: Chunk[]; logStatus: { ended: boolean; bytes: number } | null } };
    await waitFor(async () => ((await gqlOk<R>(app.url, q, { id: run.id }, user.token)).a.logStatus?.ended ? true : null), 20_000);
    // Paging through the whole log: every page bounded, together the whole log.
    let offset = 0;
    let pages = 0;
    while (offset < total) {
      const page = (await gqlOk<R>(app.url, q, { id: run.id, offset }, user.token)).a.logs;
      expect(page.length).toBeGreaterThan(0);
      const bytes = page.reduce((n, c) => n + c.size, 0);
      expect(bytes).toBeLessThanOrEqual(1024 * 1024);
      contiguous(page, offset);
      offset += bytes;
      pages++;
    }
    expect(offset).toBe(total);
    expect(pages).toBeGreaterThanOrEqual(3);
  });

  it("binary and invalid UTF-8 output keeps the byte contract: contiguous offsets, size = bytes of data, total = logStatus.bytes", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "binary-printer");
    const jobId = await runCommand(app.url, user.token, "printf 'a\\377b\\342\\202c\\033[2J\\000z'; head -c 20000 /dev/urandom; printf '\\342'");
    const run = await runOf(app.url, user.token, jobId);
    await finishedRun(app.url, user.token, jobId);
    type R = { run: { logs: Chunk[]; logStatus: { ended: boolean; bytes: number } | null } };
    const d = await waitFor(async () => {
      const r = await gqlOk<R>(app.url, `query($id: ID!) { run(id: $id) { logs(limit: 1000) { ${CHUNK_FIELDS} } logStatus { ended bytes } } }`, { id: run.id }, user.token);
      return r.run.logStatus?.ended ? r : null;
    }, 15_000);
    const text = contiguous(d.run.logs);
    for (const c of d.run.logs) expect(Buffer.byteLength(c.data, "utf8"), `chunk at ${c.offset}`).toBe(c.size);
    expect(Buffer.byteLength(text, "utf8")).toBe(d.run.logStatus!.bytes);
    // Invalid bytes are replaced, escapes and NUL kept as printed.
    expect(text.startsWith("a\ufffdb\ufffdc\u001b[2J\u0000z")).toBe(true);
  });
});
