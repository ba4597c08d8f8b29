/**
 * HTTP jobs over the real API and executor, against a loopback receiver (allowed by
 * KAIROS_HTTP_JOB_ALLOWED_CIDRS): success with the response recorded on the run, a 5xx retried by
 * the job's policy, a 4xx not retried, a timeout, and a signature the receiver can verify.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySignature } from "../../src/core/http-signing.js";
import { useTestApp } from "../helpers/app.js";
import { makeUser } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { FINAL_STATUSES } from "../helpers/job-runs.js";

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

const t = useTestApp({ env: { KAIROS_HTTP_JOB_ALLOWED_CIDRS: "127.0.0.1/32" } });
let server: Server;
let base: string;
const received: Received[] = [];
const flakyCount = new Map<string, number>();

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const path = req.url!.split("?")[0];
      if (path === "/ok") {
        res.writeHead(200, { "content-type": "text/plain", "x-receiver": "yes" });
        res.end(`hello ${body}`);
      } else if (path === "/flaky") {
        const key = String(req.headers["kairos-run-id"]);
        const n = (flakyCount.get(key) ?? 0) + 1;
        flakyCount.set(key, n);
        res.writeHead(n === 1 ? 503 : 200);
        res.end(n === 1 ? "busy" : "fine");
      } else if (path === "/missing") {
        res.writeHead(404);
        res.end("no such thing");
      } else if (path === "/big") {
        res.writeHead(200);
        res.end("x".repeat(200 * 1024));
      } else if (path === "/slow") {
        // Never answers: the job's timeout ends the attempt.
      } else {
        res.writeHead(500);
        res.end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

interface HttpRun {
  id: string;
  status: string;
  attempt: number;
  error: string | null;
  outputTail: string | null;
  exitCode: number | null;
  httpResponse: { status: number; headers: Record<string, string>; body: string; bodyTruncated: boolean; durationMs: number } | null;
}

const RUN = `id status attempt error outputTail exitCode httpResponse { status headers body bodyTruncated durationMs }`;

async function httpJob(token: string, http: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await gqlOk<{ createJob: { id: string } }>(
    t.app.url,
    `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
    { input: { name: `h-${Math.random().toString(36).slice(2)}`, schedule: { kind: "ONCE" }, retry: { maxAttempts: 1 }, ...extra, spec: { kind: "HTTP", http, ...((extra.spec as object) ?? {}) } } },
    token,
  );
  return r.createJob.id;
}

async function finalRun(token: string, jobId: string, timeoutMs = 30_000): Promise<HttpRun> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const d = await gqlOk<{ runs: { edges: Array<{ node: HttpRun }> } }>(t.app.url, `query($id: ID!) { runs(jobId: $id, first: 1) { edges { node { ${RUN} } } } }`, { id: jobId }, token);
    const run = d.runs.edges[0]?.node;
    if (run && FINAL_STATUSES.has(run.status)) return run;
    if (Date.now() > end) throw new Error(`run of job ${jobId} did not finish: ${JSON.stringify(run)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("HTTP jobs", () => {
  it("makes the request, records status, headers and body on the run, and sends the run id and attempt", async () => {
    const jobId = await httpJob(t.admin, { method: "POST", url: `${base}/ok?x=1`, headers: { "Content-Type": "text/plain", "X-Custom": "abc" }, body: "world" });
    const run = await finalRun(t.admin, jobId);
    expect(run.status).toBe("SUCCEEDED");
    expect(run.exitCode).toBeNull();
    expect(run.httpResponse).toMatchObject({ status: 200, body: "hello world", bodyTruncated: false });
    expect(run.httpResponse!.headers["x-receiver"]).toBe("yes");
    const req = received.find((r) => r.headers["kairos-run-id"] === run.id)!;
    expect(req).toBeTruthy();
    expect(req.method).toBe("POST");
    expect(req.url).toBe("/ok?x=1");
    expect(req.body).toBe("world");
    expect(req.headers["x-custom"]).toBe("abc");
    expect(req.headers["kairos-attempt"]).toBe("1");
    expect(req.headers["kairos-job-id"]).toBe(jobId);
    expect(req.headers["kairos-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  });

  it("retries a 5xx under the job's retry policy, with the same run id and the next attempt number", async () => {
    const jobId = await httpJob(t.admin, { url: `${base}/flaky`, body: "{}" }, { retry: { maxAttempts: 3, initial: "PT1S", jitter: "NONE" } });
    const run = await finalRun(t.admin, jobId);
    expect(run.status).toBe("SUCCEEDED");
    expect(run.attempt).toBe(2);
    expect(run.httpResponse?.status).toBe(200);
    const attempts = received.filter((r) => r.headers["kairos-run-id"] === run.id).map((r) => r.headers["kairos-attempt"]);
    expect(attempts).toEqual(["1", "2"]);
  });

  it("does not retry a 4xx, and says why", async () => {
    const jobId = await httpJob(t.admin, { method: "GET", url: `${base}/missing` }, { retry: { maxAttempts: 3, initial: "PT1S" } });
    const run = await finalRun(t.admin, jobId);
    expect(run.status).toBe("FAILED");
    expect(run.attempt).toBe(1);
    expect(run.httpResponse?.status).toBe(404);
    expect(run.error).toMatch(/HTTP 404.*not retried/);
  });

  it("counts the listed statuses as success", async () => {
    const jobId = await httpJob(t.admin, { method: "GET", url: `${base}/missing`, successStatuses: ["2xx", "404"] });
    expect((await finalRun(t.admin, jobId)).status).toBe("SUCCEEDED");
  });

  it("caps the recorded body", async () => {
    const run = await finalRun(t.admin, await httpJob(t.admin, { method: "GET", url: `${base}/big` }));
    expect(run.status).toBe("SUCCEEDED");
    expect(run.httpResponse!.bodyTruncated).toBe(true);
    expect(run.httpResponse!.body.length).toBe(64 * 1024);
  });

  it("ends an attempt at the job's timeout as TIMED_OUT", async () => {
    const jobId = await httpJob(t.admin, { method: "GET", url: `${base}/slow` }, { spec: { timeout: "PT1S" } });
    const run = await finalRun(t.admin, jobId);
    expect(run.status).toBe("TIMED_OUT");
    expect(run.error).toMatch(/timed out after 1000 ms/);
    expect(run.httpResponse).toBeNull();
  });

  it("a cancel aborts the request in flight", async () => {
    const before = received.filter((r) => r.url === "/slow").length;
    const jobId = await httpJob(t.admin, { method: "GET", url: `${base}/slow` }, { spec: { timeout: "PT60S" } });
    // Running once the receiver holds its request.
    const end = Date.now() + 15_000;
    while (received.filter((r) => r.url === "/slow").length === before && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    const d = await gqlOk<{ runs: { edges: Array<{ node: { id: string } }> } }>(t.app.url, `query($id: ID!) { runs(jobId: $id, first: 1) { edges { node { id } } } }`, { id: jobId }, t.admin);
    const started = Date.now();
    await gqlOk(t.app.url, `mutation($id: ID!) { cancelRun(id: $id) { status } }`, { id: d.runs.edges[0]!.node.id }, t.admin);
    const run = await finalRun(t.admin, jobId);
    expect(run.status).toBe("CANCELLED");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("signs every request so the receiver can verify it with the secret shown once", async () => {
    const user = await makeUser(t.app, t.admin, `signer-${Math.random().toString(36).slice(2, 8)}`);
    const rotated = await gqlOk<{ rotateHttpSigningSecret: { secret: string; previousValidUntil: string | null } }>(
      t.app.url,
      `mutation { rotateHttpSigningSecret { secret createdAt previousValidUntil } }`,
      {},
      user.token,
    );
    const secret = rotated.rotateHttpSigningSecret.secret;
    expect(secret).toMatch(/^whsec_/);
    expect(rotated.rotateHttpSigningSecret.previousValidUntil).toBeNull();
    const run = await finalRun(user.token, await httpJob(user.token, { url: `${base}/ok`, body: '{"n":1}' }));
    expect(run.status).toBe("SUCCEEDED");
    const req = received.find((r) => r.headers["kairos-run-id"] === run.id)!;
    const header = String(req.headers["kairos-signature"]);
    const now = Math.floor(Date.now() / 1000);
    expect(verifySignature(header, secret, run.id, req.body, now)).toBe(true);
    // Another body, another run id or another secret does not verify.
    expect(verifySignature(header, secret, run.id, '{"n":2}', now)).toBe(false);
    expect(verifySignature(header, secret, "000000000000000000000000", req.body, now)).toBe(false);
    expect(verifySignature(header, `${secret}x`, run.id, req.body, now)).toBe(false);
    // An old request is refused by the receiver's tolerance.
    expect(verifySignature(header, secret, run.id, req.body, now + 3600)).toBe(false);
  });

  it("refuses bad HTTP specs, saying what is allowed", async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ url: "ftp://example.com/x" }, /scheme "ftp:" is not allowed; allowed: http, https/],
      [{ url: "http://user:pw@example.com/" }, /must not carry credentials/],
      [{ url: "not a url" }, /"not a url" has no scheme \(start it with https:\/\/ or http:\/\/\); give an absolute http:\/\/ or https:\/\/ URL/],
      [{ url: "https://example.com/", method: "BREW" }, /"BREW" is not one of GET, HEAD, POST/],
      [{ url: "https://example.com/", method: "GET", body: "x" }, /a GET request has no body/],
      [{ url: "https://example.com/", headers: { Host: "evil" } }, /"Host" is set by the executor/],
      [{ url: "https://example.com/", headers: { "Kairos-Run-Id": "x" } }, /headers starting with Kairos- are the executor's/],
      [{ url: "https://example.com/", successStatuses: ["2xxx"] }, /is not a status \("204"\), a class \("2xx"\) or a range/],
    ];
    for (const [http, msg] of cases) {
      const r = await gql(t.app.url, `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`, { input: { name: `bad-${Math.random()}`, schedule: { kind: "ONCE" }, spec: { kind: "HTTP", http } } }, t.admin);
      expect(r.errors?.[0]?.extensions?.code, JSON.stringify(http)).toBe("BAD_USER_INPUT");
      expect(r.errors?.[0]?.message).toMatch(msg);
    }
    const noHttp = await gql(t.app.url, `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`, { input: { name: "bad-nohttp", schedule: { kind: "ONCE" }, spec: { kind: "HTTP" } } }, t.admin);
    expect(noHttp.errors?.[0]?.message).toMatch(/an HTTP job gives its request/);
    const foreign = await gql(t.app.url, `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`, { input: { name: "bad-foreign", schedule: { kind: "ONCE" }, spec: { kind: "HTTP", command: "true", http: { url: "https://example.com" } } } }, t.admin);
    expect(foreign.errors?.[0]?.message).toMatch(/spec.command: applies to COMMAND jobs only, not HTTP/);
  });

  it("shows the request on the job", async () => {
    const jobId = await httpJob(t.admin, { url: "https://example.com/hook", headers: { "X-A": "1" }, body: "b", successStatuses: ["2xx", "304"] }, { paused: true });
    const d = await gqlOk<{ job: { spec: { kind: string; timeout: string; http: { method: string; url: string; headers: Record<string, string>; body: string; successStatuses: string[] } } } }>(
      t.app.url,
      `query($id: ID!) { job(id: $id) { spec { kind timeout http { method url headers body successStatuses } } } }`,
      { id: jobId },
      t.admin,
    );
    expect(d.job.spec).toEqual({ kind: "HTTP", timeout: "PT30S", http: { method: "POST", url: "https://example.com/hook", headers: { "X-A": "1" }, body: "b", successStatuses: ["2xx", "304"] } });
  });
});
