/**
 * Artifacts over the real API and the embedded S3 (issue #16): upload then complete, and every
 * refusal leaving nothing behind (no document, no object).
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveArtifact, resolveArtifactOfOwner } from "../../src/core/index.js";
import { ArtifactCache } from "../../src/executor/index.js";
import { code, makeJob, makeUser, message } from "../helpers/accounts.js";
import { useTestApp, type TestApp } from "../helpers/app.js";
import { gql, gqlOk } from "../helpers/graphql.js";

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

const CREATE = `mutation($name: String!, $size: Int!, $sha256: String!) {
  createArtifactUpload(name: $name, size: $size, sha256: $sha256) { artifact { id status size sha256 expiresAt } uploadUrl uploadHeaders { name value } expiresAt }
}`;
const COMPLETE = `mutation($id: ID!) { completeArtifactUpload(id: $id) { id size sha256 status completedAt expiresAt } }`;
const GET = `query($id: ID!) { artifact(id: $id) { id name status size sha256 } }`;
const LIST = `query($first: Int, $after: String) { artifacts(first: $first, after: $after) { edges { node { id name status } } pageInfo { hasNextPage endCursor } } }`;
const DELETE = `mutation($id: ID!) { deleteArtifact(id: $id) }`;

interface Created {
  id: string;
  uploadUrl: string;
  headers: Record<string, string>;
}

async function create(app: TestApp, token: string, name: string, size: number, hash: string): Promise<Created> {
  const d = await gqlOk<{ createArtifactUpload: { artifact: { id: string; status: string }; uploadUrl: string; uploadHeaders: Array<{ name: string; value: string }> } }>(
    app.url,
    CREATE,
    { name, size, sha256: hash },
    token,
  );
  expect(d.createArtifactUpload.artifact.status).toBe("PENDING");
  return {
    id: d.createArtifactUpload.artifact.id,
    uploadUrl: d.createArtifactUpload.uploadUrl,
    headers: Object.fromEntries(d.createArtifactUpload.uploadHeaders.map((h) => [h.name, h.value])),
  };
}

async function put(up: Created, bytes: Buffer): Promise<void> {
  const res = await fetch(up.uploadUrl, { method: "PUT", body: bytes, headers: up.headers });
  expect(res.status).toBe(200);
}

/** Uploads and completes `bytes` as `token`'s artifact. */
async function upload(app: TestApp, token: string, bytes: Buffer, name = "script.sh"): Promise<string> {
  const up = await create(app, token, name, bytes.length, sha256(bytes));
  await put(up, bytes);
  await gqlOk(app.url, COMPLETE, { id: up.id }, token);
  return up.id;
}

/** Nothing of artifact `id` is left: no document, no object under either key. */
async function nothingLeft(app: TestApp, id: string): Promise<void> {
  expect(await app.services.mongo.c.artifacts.findOne({ _id: id })).toBeNull();
  expect(await app.services.blobs!.head(`uploads/${id}`)).toBeNull();
  expect(await app.services.blobs!.head(`artifacts/${id}`)).toBeNull();
}

describe("artifacts", () => {
  const t = useTestApp();

  it("upload then complete: the bytes are checked, stored under the artifact's key, resolvable for jobs and fetchable by an executor", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "artifact-owner");
    const bytes = Buffer.from("#!/bin/sh\necho hello from an artifact\n");
    const up = await create(app, user.token, "hello.sh", bytes.length, sha256(bytes).toUpperCase());
    // Before completion no job may use it.
    const principal = { userId: user.id, role: "USER" } as Parameters<typeof resolveArtifact>[1];
    await expect(resolveArtifact(app.services.mongo, principal, up.id)).rejects.toThrow(/upload is not complete/);
    await put(up, bytes);
    const done = (await gqlOk<{ completeArtifactUpload: Record<string, unknown> }>(app.url, COMPLETE, { id: up.id }, user.token)).completeArtifactUpload;
    expect(done).toMatchObject({ id: up.id, size: bytes.length, sha256: sha256(bytes), status: "COMPLETE", expiresAt: null });
    // Completing again answers the same artifact.
    expect((await gqlOk(app.url, COMPLETE, { id: up.id }, user.token)).completeArtifactUpload.status).toBe("COMPLETE");
    expect((await gqlOk(app.url, GET, { id: up.id }, user.token)).artifact).toMatchObject({ name: "hello.sh", status: "COMPLETE" });
    const listed = (await gqlOk(app.url, LIST, { first: 10 }, user.token)).artifacts.edges.map((e: { node: { id: string } }) => e.node.id);
    expect(listed).toEqual([up.id]);
    // The upload key is gone; the verified bytes live under a key no URL writes.
    expect(await app.services.blobs!.head(`uploads/${up.id}`)).toBeNull();
    const ref = await resolveArtifact(app.services.mongo, principal, up.id);
    expect(ref).toEqual({ id: up.id, sha256: sha256(bytes), size: bytes.length, blobKey: `artifacts/${up.id}` });
    expect(await resolveArtifactOfOwner(app.services.mongo, user.id, up.id)).toEqual(ref);
    await expect(resolveArtifactOfOwner(app.services.mongo, "someone-else", up.id)).rejects.toThrow(/not found/);
    const dir = await mkdtemp(join(tmpdir(), "kairos-artifacts-api-"));
    try {
      const path = await new ArtifactCache({ dir, blobs: app.services.blobs! }).fetch(ref);
      expect((await readFile(path)).equals(bytes)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("over the size limit, a malformed sha256 or name: refused at createArtifactUpload, nothing created", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "artifact-oversize");
    const big = await gql(app.url, CREATE, { name: "big.bin", size: 10 * 1024 * 1024 + 1, sha256: "a".repeat(64) }, user.token);
    expect(code(big)).toBe("BAD_USER_INPUT");
    expect(message(big)).toMatch(/size: must be from 1 to 10485760 bytes \(10 MiB, KAIROS_ARTIFACT_MAX_BYTES\); got 10485761/);
    const badHash = await gql(app.url, CREATE, { name: "x", size: 10, sha256: "not-a-hash" }, user.token);
    expect(code(badHash)).toBe("BAD_USER_INPUT");
    expect(message(badHash)).toMatch(/sha256: must be the sha256 of the bytes as 64 hex digits/);
    const badName = await gql(app.url, CREATE, { name: "../etc/passwd", size: 10, sha256: "a".repeat(64) }, user.token);
    expect(code(badName)).toBe("BAD_USER_INPUT");
    const zero = await gql(app.url, CREATE, { name: "empty", size: 0, sha256: "a".repeat(64) }, user.token);
    expect(code(zero)).toBe("BAD_USER_INPUT");
    expect(await app.services.mongo.c.artifacts.countDocuments({ ownerId: user.id })).toBe(0);
  });

  it("bytes whose sha256 differs from the declared one: refused, and nothing is left (no document, no object)", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "artifact-wrong-hash");
    const declared = Buffer.from("echo the script I declared\n");
    const sent = Buffer.from("echo something else entirely\n").subarray(0, declared.length);
    const up = await create(app, user.token, "x.sh", declared.length, sha256(declared));
    await put(up, sent);
    const r = await gql(app.url, COMPLETE, { id: up.id }, user.token);
    expect(code(r)).toBe("BAD_USER_INPUT");
    expect(message(r)).toContain(`have sha256 ${sha256(sent)}, but ${sha256(declared)} was declared: refused, and the upload was deleted`);
    await nothingLeft(app, up.id);
    expect(code(await gql(app.url, GET, { id: up.id }, user.token))).toBe("NOT_FOUND");
  });

  it("bytes of another size than declared: refused, nothing left", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "artifact-wrong-size");
    const declared = randomBytes(100);
    const up = await create(app, user.token, "x.bin", declared.length, sha256(declared));
    // The upload URL refuses another size: Content-Length is part of its signature.
    const refused = await fetch(up.uploadUrl, { method: "PUT", body: declared.subarray(0, 60), headers: up.headers });
    expect(refused.status).toBe(403);
    expect(await app.services.blobs!.head(`uploads/${up.id}`)).toBeNull();
    // Should a store take it anyway (one that does not check signatures), completion refuses it.
    await app.services.blobs!.put(`uploads/${up.id}`, declared.subarray(0, 60), { contentType: "application/octet-stream" });
    const r = await gql(app.url, COMPLETE, { id: up.id }, user.token);
    expect(code(r)).toBe("BAD_USER_INPUT");
    expect(message(r)).toMatch(/holds 60 bytes, but 100 were declared/);
    await nothingLeft(app, up.id);
  });

  it("completing before anything was uploaded says what to do and keeps the upload open", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "artifact-early");
    const bytes = Buffer.from("echo later\n");
    const up = await create(app, user.token, "later.sh", bytes.length, sha256(bytes));
    const r = await gql(app.url, COMPLETE, { id: up.id }, user.token);
    expect(code(r)).toBe("BAD_USER_INPUT");
    expect(message(r)).toMatch(/nothing was uploaded .* yet: PUT its 11 bytes to the uploadUrl first/);
    await put(up, bytes);
    expect((await gqlOk(app.url, COMPLETE, { id: up.id }, user.token)).completeArtifactUpload.status).toBe("COMPLETE");
  });

  it("another user's artifact is NOT_FOUND for every operation, and absent from their listing; an admin sees it", async () => {
    const { app, admin } = t;
    const owner = await makeUser(app, admin, "artifact-alice");
    const other = await makeUser(app, admin, "artifact-mallory");
    const done = await upload(app, owner.token, Buffer.from("echo mine\n"));
    const bytes = Buffer.from("echo pending\n");
    const pending = await create(app, owner.token, "p.sh", bytes.length, sha256(bytes));
    await put(pending, bytes);
    for (const id of [done, pending.id]) {
      for (const [q, v] of [
        [GET, { id }],
        [COMPLETE, { id }],
        [DELETE, { id }],
      ] as const) {
        const r = await gql(app.url, q, v, other.token);
        expect(code(r)).toBe("NOT_FOUND");
        expect(message(r)).toBe(`artifact ${id} not found`);
      }
    }
    expect((await gqlOk(app.url, LIST, { first: 100 }, other.token)).artifacts.edges).toEqual([]);
    await expect(resolveArtifact(app.services.mongo, { userId: other.id, role: "USER" } as never, done)).rejects.toThrow(/not found/);
    // The other user's attempts changed nothing: the pending upload still completes.
    expect((await gqlOk(app.url, COMPLETE, { id: pending.id }, owner.token)).completeArtifactUpload.status).toBe("COMPLETE");
    expect((await gqlOk(app.url, GET, { id: done }, admin)).artifact.status).toBe("COMPLETE");
  });

  it("deleteArtifact is refused while a job uses it, naming the job; afterwards it deletes document and bytes", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "artifact-in-use");
    const id = await upload(app, user.token, Buffer.from("echo used\n"));
    const jobId = await makeJob(app, user.token, "nightly-report");
    // The job kinds (issue #16) store the artifact as spec.artifactId.
    await app.services.mongo.c.jobs.updateOne({ _id: jobId }, { $set: { "spec.artifactId": id } });
    const r = await gql(app.url, DELETE, { id }, user.token);
    expect(code(r)).toBe("FAILED_PRECONDITION");
    expect(message(r)).toBe(`artifact ${id} is used by job "nightly-report" (${jobId}): change or delete that job first`);
    expect((await gqlOk(app.url, GET, { id }, user.token)).artifact.status).toBe("COMPLETE");
    await app.services.mongo.c.jobs.updateOne({ _id: jobId }, { $unset: { "spec.artifactId": "" } });
    expect((await gqlOk(app.url, DELETE, { id }, user.token)).deleteArtifact).toBe(id);
    await nothingLeft(app, id);
    // A pending upload is deleted with its bytes too.
    const bytes = Buffer.from("echo pending\n");
    const up = await create(app, user.token, "p.sh", bytes.length, sha256(bytes));
    await put(up, bytes);
    expect((await gqlOk(app.url, DELETE, { id: up.id }, user.token)).deleteArtifact).toBe(up.id);
    await nothingLeft(app, up.id);
  });

  it("a DAG task runs an uploaded script like a job, and the artifact cannot be deleted while the DAG uses it", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "artifact-dag");
    const other = await makeUser(app, admin, "artifact-dag-other");
    const id = await upload(app, user.token, Buffer.from('printf \'{"from":"script"}\' > "$KAIROS_RESULT"\n'), "task.sh");
    const CREATE_DAG = `mutation($input: CreateDagInput!) { createDag(input: $input) { id tasks { key spec { kind } } } }`;
    const input = (name: string) => ({
      name,
      tasks: [
        { key: "script", spec: { kind: "SCRIPT", artifactId: id, interpreter: "sh", timeout: "PT30S" } },
        { key: "after", spec: { kind: "COMMAND", command: 'cat "$KAIROS_INPUTS"', timeout: "PT30S" }, dependsOn: ["script"] },
      ],
    });
    // Another user's artifact is not theirs to name.
    const refused = await gql(app.url, CREATE_DAG, { input: input("not-mine") }, other.token);
    expect(code(refused)).toBe("NOT_FOUND");
    expect((refused.errors![0]!.extensions as { field?: string }).field ?? "").toBe("");
    const dag = (await gqlOk<{ createDag: { id: string } }>(app.url, CREATE_DAG, { input: input("uses-artifact") }, user.token)).createDag;
    const run = (await gqlOk<{ triggerDag: { id: string } }>(app.url, `mutation($id: ID!) { triggerDag(id: $id) { id } }`, { id: dag.id }, user.token)).triggerDag;
    type DagRunView = { status: string; tasks: Array<{ key: string; status: string; run: { outputTail: string | null; error: string | null } | null }> };
    const read = async () => {
      const r = await gqlOk<{ dagRun: Omit<DagRunView, "tasks"> & { tasks: { edges: Array<{ node: DagRunView["tasks"][number] }> } } }>(
        app.url,
        `query($id: ID!) { dagRun(id: $id) { status tasks { edges { node { key status run { outputTail error } } } } } }`,
        { id: run.id },
        user.token,
      );
      return { ...r.dagRun, tasks: r.dagRun.tasks.edges.map((e) => e.node) };
    };
    let done = await read();
    for (let i = 0; i < 300 && done.status === "RUNNING"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      done = await read();
    }
    expect(done.status, JSON.stringify(done)).toBe("SUCCEEDED");
    expect(done.tasks.find((x) => x.key === "after")!.run!.outputTail).toContain(`{"script":{"from":"script"}}`);
    const r = await gql(app.url, DELETE, { id }, user.token);
    expect(code(r)).toBe("FAILED_PRECONDITION");
    expect(message(r)).toBe(`artifact ${id} is used by DAG "uses-artifact" (${dag.id}): change or delete that DAG first`);
    await gqlOk(app.url, `mutation($id: ID!) { deleteDag(id: $id) }`, { id: dag.id }, user.token);
    expect((await gqlOk(app.url, DELETE, { id }, user.token)).deleteArtifact).toBe(id);
  });

  it("a completed artifact keeps its verified bytes even if its upload URL is used again", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "artifact-reput");
    const bytes = Buffer.from("echo good\n");
    const up = await create(app, user.token, "good.sh", bytes.length, sha256(bytes));
    await put(up, bytes);
    await gqlOk(app.url, COMPLETE, { id: up.id }, user.token);
    await put(up, Buffer.from("echo evil\n"));
    const ref = await resolveArtifactOfOwner(app.services.mongo, user.id, up.id);
    const body = await app.services.blobs!.get(ref.blobKey);
    const chunks: Buffer[] = [];
    for await (const c of body!) chunks.push(Buffer.from(c as Uint8Array));
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
  });

  it("deleting a user deletes their artifacts, documents and bytes", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "artifact-leaver");
    const done = await upload(app, user.token, Buffer.from("echo bye\n"));
    const bytes = Buffer.from("echo half\n");
    const pending = await create(app, user.token, "half.sh", bytes.length, sha256(bytes));
    await put(pending, bytes);
    await gqlOk(app.url, `mutation($u: ID!) { deleteUser(userId: $u, jobs: DELETE) { userId } }`, { u: user.id }, admin);
    await nothingLeft(app, done);
    await nothingLeft(app, pending.id);
  });
});

describe("abandoned artifact uploads", () => {
  const t = useTestApp({ env: { KAIROS_ARTIFACT_UPLOAD_TTL: "PT1S" } });

  it("an upload never completed expires: its document and its bytes are deleted by the sweep, and it cannot be completed", async () => {
    const { app, admin } = t;
    const user = await makeUser(app, admin, "artifact-abandoner");
    const bytes = Buffer.from("echo abandoned\n");
    const up = await create(app, user.token, "gone.sh", bytes.length, sha256(bytes));
    await put(up, bytes);
    const deadline = Date.now() + 10_000;
    while ((await app.services.mongo.c.artifacts.findOne({ _id: up.id })) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    await nothingLeft(app, up.id);
    expect(code(await gql(app.url, COMPLETE, { id: up.id }, user.token))).toBe("NOT_FOUND");
  });
});
