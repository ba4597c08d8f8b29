/**
 * SCRIPT and BINARY jobs over the real API, executor (its sandbox) and the embedded S3: inline
 * scripts in each interpreter, an uploaded script and an uploaded binary, and the refusals at
 * submission (unknown interpreter, oversize source, another user's or an incomplete artifact).
 */
import { createHash } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeUser } from "../helpers/accounts.js";
import { useTestApp } from "../helpers/app.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { finishedRun } from "../helpers/job-runs.js";

// The default request limit (2 MiB) leaves room for a script just over 1 MiB: refused by the spec
// check with its own message, not by the transport.
const t = useTestApp();
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const CREATE_JOB = `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`;

async function submit(token: string, spec: Record<string, unknown>): Promise<string> {
  const r = await gqlOk<{ createJob: { id: string } }>(t.app.url, CREATE_JOB, { input: { name: `p-${Math.random().toString(36).slice(2)}`, schedule: { kind: "ONCE" }, retry: { maxAttempts: 1 }, spec: { timeout: "PT30S", ...spec } } }, token);
  return r.createJob.id;
}

async function refused(token: string, spec: Record<string, unknown>): Promise<{ code: string | undefined; message: string | undefined }> {
  const r = await gql(t.app.url, CREATE_JOB, { input: { name: `bad-${Math.random().toString(36).slice(2)}`, schedule: { kind: "ONCE" }, spec } }, token);
  return { code: r.errors?.[0]?.extensions?.code as string | undefined, message: r.errors?.[0]?.message };
}

/** Uploads `bytes` as the caller's artifact (create, PUT, complete); its id. */
async function upload(token: string, bytes: Buffer, name: string, complete = true): Promise<string> {
  const d = await gqlOk<{ createArtifactUpload: { artifact: { id: string }; uploadUrl: string; uploadHeaders: Array<{ name: string; value: string }> } }>(
    t.app.url,
    `mutation($name: String!, $size: Int!, $sha256: String!) { createArtifactUpload(name: $name, size: $size, sha256: $sha256) { artifact { id } uploadUrl uploadHeaders { name value } } }`,
    { name, size: bytes.length, sha256: sha256(bytes) },
    token,
  );
  const up = d.createArtifactUpload;
  const res = await fetch(up.uploadUrl, { method: "PUT", body: bytes, headers: Object.fromEntries(up.uploadHeaders.map((h) => [h.name, h.value])) });
  expect(res.status).toBe(200);
  if (complete) await gqlOk(t.app.url, `mutation($id: ID!) { completeArtifactUpload(id: $id) { id } }`, { id: up.artifact.id }, token);
  return up.artifact.id;
}

describe("SCRIPT jobs", () => {
  it.each([
    ["sh", 'echo "sh says $1 $KAIROS_ATTEMPT"', ["hi"], "sh says hi 1\n"],
    ["bash", 'declare -a a=(x y); echo "bash says ${a[1]} $1"', ["there"], "bash says y there\n"],
    ["python3", 'import sys\nprint("python", sys.version_info[0], sys.argv[1])', ["arg"], "python 3 arg\n"],
    ["node", 'console.log("node", typeof process.versions.node, process.argv[2])', ["arg"], "node string arg\n"],
  ])("runs an inline %s script with its args", async (interpreter, source, args, out) => {
    const run = await finishedRun(t.app.url, t.admin, await submit(t.admin, { kind: "SCRIPT", interpreter, source, args }));
    expect(run.error).toBeNull();
    expect(run.status).toBe("SUCCEEDED");
    expect(run.outputTail).toBe(out);
  });

  it("a failing script fails with its exit code", async () => {
    const run = await finishedRun(t.app.url, t.admin, await submit(t.admin, { kind: "SCRIPT", interpreter: "python3", source: "import sys\nsys.exit(3)" }));
    expect(run.status).toBe("FAILED");
    expect(run.exitCode).toBe(3);
  });

  it("runs an uploaded script", async () => {
    const user = await makeUser(t.app, t.admin, "script-uploader");
    const id = await upload(user.token, Buffer.from('print("from an artifact", 6 * 7)\n'), "answer.py");
    const jobId = await submit(user.token, { kind: "SCRIPT", interpreter: "python3", artifactId: id });
    const run = await finishedRun(t.app.url, user.token, jobId);
    expect(run.error).toBeNull();
    expect(run.outputTail).toBe("from an artifact 42\n");
    const job = await gqlOk<{ job: { spec: { kind: string; interpreter: string; source: string | null; artifact: { id: string; sha256: string } } } }>(
      t.app.url,
      `query($id: ID!) { job(id: $id) { spec { kind interpreter source artifact { id sha256 } } } }`,
      { id: jobId },
      user.token,
    );
    expect(job.job.spec).toMatchObject({ kind: "SCRIPT", interpreter: "python3", source: null, artifact: { id } });
  });

  it("refuses an interpreter Kairos does not know, listing the allowed ones", async () => {
    const r = await refused(t.admin, { kind: "SCRIPT", interpreter: "ruby", source: "puts 1" });
    expect(r.code).toBe("BAD_USER_INPUT");
    expect(r.message).toBe('spec.interpreter: "ruby" is not an interpreter Kairos runs; allowed: bash, sh, python3, node');
  });

  it("refuses a script over 1 MiB inline, and one with neither or both of source and artifactId", async () => {
    const big = await refused(t.admin, { kind: "SCRIPT", interpreter: "sh", source: `#${"x".repeat(1024 * 1024)}` });
    expect(big.code).toBe("BAD_USER_INPUT");
    expect(big.message).toMatch(/at most 1048576 \(1 MiB\) inline; upload a larger script as an artifact/);
    const neither = await refused(t.admin, { kind: "SCRIPT", interpreter: "sh" });
    expect(neither.message).toMatch(/exactly one of source .* or artifactId/);
    const both = await refused(t.admin, { kind: "SCRIPT", interpreter: "sh", source: "true", artifactId: "0123456789abcdef01234567" });
    expect(both.message).toMatch(/exactly one of source .* or artifactId/);
  });

  it("refuses fields of another kind and unknown kinds", async () => {
    const r = await refused(t.admin, { kind: "SCRIPT", interpreter: "sh", source: "true", command: "true" });
    expect(r.message).toBe("spec.command: applies to COMMAND jobs only, not SCRIPT");
    const k = await gql(t.app.url, CREATE_JOB, { input: { name: "bad-kind", schedule: { kind: "ONCE" }, spec: { kind: "DOCKER" } } }, t.admin);
    expect(k.errors?.[0]?.message).toMatch(/"DOCKER".*(COMMAND|SpecKind)/s);
  });

  it("nodes advertise their interpreters", async () => {
    const d = await gqlOk<{ nodes: { edges: Array<{ node: { interpreters: Array<{ name: string; path: string }> } }> } }>(t.app.url, `query { nodes { edges { node { interpreters { name path version } } } } }`, {}, t.admin);
    const names = d.nodes.edges[0]!.node.interpreters.map((i) => i.name);
    expect(names).toEqual(expect.arrayContaining(["sh", "bash", "python3", "node"]));
  });
});

describe("BINARY jobs", () => {
  it("runs an uploaded executable with its args, in the sandbox", async () => {
    const user = await makeUser(t.app, t.admin, "binary-uploader");
    const echo = readFileSync("/bin/echo");
    const id = await upload(user.token, echo, "echo");
    const run = await finishedRun(t.app.url, user.token, await submit(user.token, { kind: "BINARY", artifactId: id, args: ["hello", "binary"] }));
    expect(run.error).toBeNull();
    expect(run.status).toBe("SUCCEEDED");
    expect(run.outputTail).toBe("hello binary\n");
  });

  it("never runs a cached copy whose bytes were changed: the node fetches the artifact again", async () => {
    const user = await makeUser(t.app, t.admin, "binary-tamper");
    const echo = readFileSync("/bin/echo");
    const id = await upload(user.token, echo, "echo");
    const jobId = await submit(user.token, { kind: "BINARY", artifactId: id, args: ["genuine"] });
    expect((await finishedRun(t.app.url, user.token, jobId)).outputTail).toBe("genuine\n");
    const cached = join(t.app.config.artifacts.cacheDir, sha256(echo));
    expect(existsSync(cached)).toBe(true);
    chmodSync(cached, 0o644);
    writeFileSync(cached, "#!/bin/sh\necho tampered\n");
    await gqlOk(t.app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: jobId }, user.token);
    const end = Date.now() + 30_000;
    let outputs: Array<string | null> = [];
    while (Date.now() < end) {
      const d = await gqlOk<{ runs: { edges: Array<{ node: { status: string; outputTail: string | null } }> } }>(t.app.url, `query($id: ID!) { runs(jobId: $id, first: 5) { edges { node { status outputTail } } } }`, { id: jobId }, user.token);
      const done = d.runs.edges.filter((e) => e.node.status === "SUCCEEDED" || e.node.status === "FAILED");
      outputs = done.map((e) => e.node.outputTail);
      if (done.length === 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(outputs).toEqual(["genuine\n", "genuine\n"]);
    expect(readFileSync(cached)).toEqual(echo);
  });

  it("refuses another user's artifact as not found, and an incomplete one saying what to do", async () => {
    const owner = await makeUser(t.app, t.admin, "artifact-keeper");
    const other = await makeUser(t.app, t.admin, "artifact-thief");
    const id = await upload(owner.token, Buffer.from("#!/bin/sh\necho mine\n"), "mine.sh");
    const stolen = await refused(other.token, { kind: "BINARY", artifactId: id });
    expect(stolen.code).toBe("NOT_FOUND");
    const pending = await upload(owner.token, Buffer.from("#!/bin/sh\necho later\n"), "later.sh", false);
    const notDone = await refused(owner.token, { kind: "BINARY", artifactId: pending });
    expect(notDone.code).toBe("BAD_USER_INPUT");
    expect(notDone.message).toMatch(/upload is not complete: PUT the bytes to the uploadUrl, then call completeArtifactUpload/);
    const none = await refused(owner.token, { kind: "BINARY" });
    expect(none.message).toMatch(/a BINARY job names the uploaded executable/);
  });
});
