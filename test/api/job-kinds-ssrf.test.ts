/**
 * HTTP jobs may not reach what is not public (SSRF): with no admin allowance, requests to
 * loopback, the cloud metadata address, private ranges, and host names resolving to loopback are
 * refused when the executor connects, as a clear run error that is not retried, and nothing
 * reaches the target.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { gqlOk } from "../helpers/graphql.js";
import { FINAL_STATUSES } from "../helpers/job-runs.js";

const t = useTestApp();
let server: Server;
let port = 0;
let hits = 0;

beforeAll(async () => {
  server = createServer((_req, res) => {
    hits++;
    res.end("should never be reached");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function runOf(url: string): Promise<{ status: string; attempt: number; error: string | null }> {
  const { createJob } = await gqlOk<{ createJob: { id: string } }>(
    t.app.url,
    `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
    { input: { name: `s-${Math.random().toString(36).slice(2)}`, schedule: { kind: "ONCE" }, retry: { maxAttempts: 3, initial: "PT1S" }, spec: { kind: "HTTP", timeout: "PT5S", http: { method: "GET", url } } } },
    t.admin,
  );
  const end = Date.now() + 30_000;
  for (;;) {
    const d = await gqlOk<{ runs: { edges: Array<{ node: { status: string; attempt: number; error: string | null } }> } }>(
      t.app.url,
      `query($id: ID!) { runs(jobId: $id, first: 1) { edges { node { status attempt error } } } }`,
      { id: createJob.id },
      t.admin,
    );
    const run = d.runs.edges[0]?.node;
    if (run && FINAL_STATUSES.has(run.status)) return run;
    if (Date.now() > end) throw new Error(`no end: ${JSON.stringify(run)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("HTTP jobs: SSRF protection", () => {
  it.each([
    ["loopback by address", () => `http://127.0.0.1:${port}/`, /127\.0\.0\.1/],
    ["a host name resolving to loopback", () => `http://localhost:${port}/`, /localhost \((127\.0\.0\.1|::1)\)/],
    ["IPv6 loopback", () => `http://[::1]:${port}/`, /::1/],
    ["loopback as an IPv4-mapped IPv6 address", () => `http://[::ffff:127.0.0.1]:${port}/`, /refused to connect/],
    ["the cloud metadata address (link-local)", () => "http://169.254.169.254/latest/meta-data/", /169\.254\.169\.254/],
    ["a private address", () => "http://10.1.2.3/", /10\.1\.2\.3/],
    ["the unspecified address", () => `http://0.0.0.0:${port}/`, /0\.0\.0\.0/],
  ])("refuses %s, without retrying and without reaching it", async (_what, url, target) => {
    const before = hits;
    const run = await runOf(url());
    expect(run.status).toBe("FAILED");
    expect(run.attempt).toBe(1);
    expect(run.error).toMatch(/^refused to connect to /);
    expect(run.error).toMatch(target);
    expect(run.error).toMatch(/KAIROS_HTTP_JOB_ALLOWED_CIDRS/);
    expect(hits).toBe(before);
  });
});
