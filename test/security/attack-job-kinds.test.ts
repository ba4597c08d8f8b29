/**
 * A hostile user against the job kinds (SCRIPT, BINARY, HTTP): what got through before, and what
 * holds that no other test pins down. Each test fails if the attack works.
 *
 * - HTTP header values Node cannot send (a control character, a character above U+00FF) were
 *   accepted at submission and failed every attempt at run time, as "could not set up the run's
 *   sandbox", retried by the policy: refused now at submission, and an attempt never rejects.
 * - KAIROS_HTTP_JOB_DENIED_CIDRS lost to any allowed range covering it (request-filtering-agent
 *   checks its allow list first), and so did the node's own addresses: allowing 10.0.0.0/8 for an
 *   internal receiver opened the node itself and every denied cluster address in it.
 * - verifySignature (the receivers' reference check) threw on a 64-character v1 that is not hex,
 *   instead of answering false: a forged header crashed the receiver's handler.
 * - A BINARY's program was copied over whatever `.kairos-program` already was, following a
 *   symlink (as root on a real node) when a slot's reset had failed and left a run's leftovers.
 * - A denied or allowed CIDR the agent could not parse ("10.0.0.7/40") passed the settings and
 *   was skipped with a warning: a mistyped deny silently denied nothing.
 *
 * Held, and pinned here: every spelling of loopback and of the other non-public ranges, DNS
 * rebinding, redirects, schemes, CRLF, reserved headers, secrets per user and never readable (an
 * API key cannot rotate one), a SCRIPT's view of the server's environment.
 */
import dns from "node:dns";
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { syncBuiltinESMExports } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { signatureOf, verifySignature } from "../../src/core/http-signing.js";
import { validateSpec } from "../../src/core/spec.js";
import { ConfigError, type JobSpec, type RunDoc } from "../../src/domain/index.js";
import { RunAbort } from "../../src/executor/abort.js";
import { runHttpAttempt } from "../../src/executor/kinds/http-job.js";
import { installProgram } from "../../src/executor/kinds/programs.js";
import { httpAgents, type HttpTargetRules } from "../../src/core/ssrf.js";
import { useTestApp } from "../helpers/app.js";
import { makeUser } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { finishedRun, submitJob } from "../helpers/job-runs.js";

let server: Server;
let port = 0;
let hits = 0;
const received: Array<{ runId: string; signature: string }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits++;
    if (req.url === "/echo") {
      received.push({ runId: String(req.headers["kairos-run-id"]), signature: String(req.headers["kairos-signature"]) });
    }
    if (req.url === "/redirect-to-metadata") {
      res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" });
      res.end();
      return;
    }
    res.end("reached");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function httpRun(url: string, headers: Record<string, string> = {}): RunDoc {
  const spec = { kind: "HTTP", timeoutMs: 5_000, http: { method: "GET", url, headers, body: null, successStatuses: [[200, 299]] } } as unknown as JobSpec;
  return { _id: "run-1", ownerId: "owner-1", jobId: "job-1", attempt: 1, scheduledFor: new Date(), spec } as unknown as RunDoc;
}

async function attempt(url: string, rules: HttpTargetRules, headers: Record<string, string> = {}) {
  const agents = httpAgents(rules);
  try {
    return await runHttpAttempt(httpRun(url, headers), 1, { agents, secretsFor: async () => ["secret"], userAgent: "attack" }, new RunAbort());
  } finally {
    agents.destroy();
  }
}

describe("HTTP jobs: where they may connect", () => {
  it.each([
    ["127.1", "127.0.0.1"],
    ["0x7f000001", "127.0.0.1"],
    ["2130706433", "127.0.0.1"],
    ["0177.0.0.1", "127.0.0.1"],
    ["127.0.0.2", "127.0.0.2"],
    ["0", "0.0.0.0"],
    ["[::]", "::"],
    ["[::ffff:0:7f00:1]", "::ffff:0:7f00:1"],
    ["[64:ff9b::7f00:1]", "64:ff9b::7f00:1"],
    ["172.16.0.1", "172.16.0.1"],
    ["192.168.1.1", "192.168.1.1"],
    ["100.64.0.1", "100.64.0.1"],
    ["[fd00::1]", "fd00::1"],
    ["[fe80::1]", "fe80::1"],
  ])("refuses %s (every spelling of a non-public address) without reaching it", async (host, address) => {
    const before = hits;
    const r = await attempt(`http://${host}:${port}/`, { allowedCidrs: [], deniedCidrs: [] });
    expect(r.http.error).toContain(`refused to connect to ${address}:`);
    expect(r.http.retryable).toBe(false);
    expect(hits).toBe(before);
  });

  it("a denied address stays refused inside an allowed range, and so does the node's own", async () => {
    const before = hits;
    const denied = await attempt(`http://127.0.0.1:${port}/`, { allowedCidrs: ["127.0.0.0/8"], deniedCidrs: ["127.0.0.1"] });
    expect(denied.http.error).toContain("refused to connect to 127.0.0.1:");
    // 127.0.0.1 is this node's own (lo): a range that merely covers it does not open the node.
    const own = await attempt(`http://127.0.0.1:${port}/`, { allowedCidrs: ["127.0.0.0/8"], deniedCidrs: [] });
    expect(own.http.error).toContain("refused to connect to 127.0.0.1: it is one of this cluster's own addresses");
    expect(hits).toBe(before);
    // Named exactly (a test's or a trusted local receiver's "127.0.0.1/32"), it is allowed.
    const named = await attempt(`http://127.0.0.1:${port}/`, { allowedCidrs: ["127.0.0.1/32"], deniedCidrs: [] });
    expect(named.http.response?.status).toBe(200);
    expect(hits).toBe(before + 1);
  });

  it("DNS rebinding: a name is resolved once per connection, and the address checked is the one connected to", async () => {
    // A second loopback server stands for the forbidden target; 127.0.0.1 alone is allowed.
    let forbiddenHits = 0;
    const forbidden = createServer((_req, res) => {
      forbiddenHits++;
      res.end("forbidden reached");
    });
    await new Promise<void>((r) => forbidden.listen(port, "127.0.0.2", r));
    // The attacker's DNS: an allowed answer first, the forbidden one on every later query.
    const original = dns.lookup;
    let queries = 0;
    const rebinding = ((hostname: string, options: unknown, cb: (...a: unknown[]) => void) => {
      if (hostname !== "rebind.attacker.test") return (original as (...a: unknown[]) => void)(hostname, options, cb);
      const address = queries++ === 0 ? "127.0.0.1" : "127.0.0.2";
      if ((options as { all?: boolean }).all) cb(null, [{ address, family: 4 }]);
      else cb(null, address, 4);
    }) as typeof dns.lookup;
    dns.lookup = rebinding;
    syncBuiltinESMExports();
    try {
      const before = hits;
      const first = await attempt(`http://rebind.attacker.test:${port}/`, { allowedCidrs: ["127.0.0.1/32"], deniedCidrs: [] });
      expect(first.http.response?.status).toBe(200);
      expect(queries).toBe(1);
      expect(hits).toBe(before + 1);
      const second = await attempt(`http://rebind.attacker.test:${port}/`, { allowedCidrs: ["127.0.0.1/32"], deniedCidrs: [] });
      expect(second.http.error).toContain("refused to connect to rebind.attacker.test (127.0.0.2):");
      expect(forbiddenHits).toBe(0);
    } finally {
      dns.lookup = original;
      syncBuiltinESMExports();
      forbidden.closeAllConnections();
      await new Promise((r) => forbidden.close(r));
    }
  });

  it.each(["10.0.0.7/40", "999.1.1.1", "fd00::/129", "10.0.0.0/8/8"])("refuses to start with a denied or allowed entry it could not apply (%s), never skipping it", (entry) => {
    for (const name of ["KAIROS_HTTP_JOB_DENIED_CIDRS", "KAIROS_HTTP_JOB_ALLOWED_CIDRS"]) {
      expect(() => loadConfig("dev", { [name]: `10.0.0.0/8,${entry}` })).toThrow(ConfigError);
      expect(() => loadConfig("dev", { [name]: `10.0.0.0/8,${entry}` })).toThrow(`${name}: "${entry}" is not an address or CIDR`);
    }
    expect(loadConfig("dev", { KAIROS_HTTP_JOB_DENIED_CIDRS: "10.0.0.7, fd00::/8,2001:db8::1/128" }).jobKinds.httpDeniedCidrs).toEqual(["10.0.0.7", "fd00::/8", "2001:db8::1/128"]);
  });

  it("an allowed receiver's redirect to the metadata address is not followed", async () => {
    const before = hits;
    const r = await attempt(`http://127.0.0.1:${port}/redirect-to-metadata`, { allowedCidrs: ["127.0.0.1/32"], deniedCidrs: [] });
    expect(r.http.response?.status).toBe(302);
    expect(r.http.succeeded).toBe(false);
    expect(r.http.retryable).toBe(false);
    expect(r.http.error).toMatch(/redirects are not followed/);
    expect(hits).toBe(before + 1);
  });

  it("an attempt with a header Node cannot send resolves as a failed attempt, it does not reject", async () => {
    const r = await attempt(`http://127.0.0.1:${port}/`, { allowedCidrs: ["127.0.0.1/32"], deniedCidrs: [] }, { "x-a": "caf\u20ac" });
    expect(r.http.succeeded).toBe(false);
    expect(r.http.retryable).toBe(false);
    expect(r.http.error).toMatch(/x-a/);
  });
});

describe("HTTP jobs: submission", () => {
  const spec = (headers: Record<string, string>) => ({ kind: "HTTP" as const, http: { url: "https://example.com/", headers } });
  it.each([
    ["a control character", "a\u0001b"],
    ["DEL", "a\u007fb"],
    ["a character above U+00FF", "caf\u20ac"],
  ])("refuses a header value with %s, saying what is allowed", (_what, value) => {
    expect(() => validateSpec(spec({ "X-Note": value }))).toThrow(/spec\.http\.headers: value of "X-Note" .*(tab|visible)/);
  });

  it.each([
    [{ url: "file:///etc/passwd" }, /spec\.http\.url: scheme "file:" is not allowed; allowed: http, https/],
    [{ url: "gopher://127.0.0.1:6379/_FLUSHALL" }, /scheme "gopher:" is not allowed/],
    [{ url: "data:text/plain,hi" }, /scheme "data:" is not allowed/],
    [{ url: "http://:pw@example.com/" }, /must not carry credentials/],
    [{ url: "https://example.com/", headers: { "X-A": "1\r\nX-Injected: 1" } }, /value of "X-A" may hold only/],
    [{ url: "https://example.com/", headers: { "X-A\r\nX-Injected": "1" } }, /is not a header name/],
    [{ url: "https://example.com/", headers: { "transfer-ENCODING": "chunked" } }, /is set by the executor/],
    [{ url: "https://example.com/", headers: { "KAIROS-signature": "t=1,v1=0" } }, /headers starting with Kairos- are the executor's/],
    [{ url: `https://example.com/${"a".repeat(8192)}` }, /spec\.http\.url: at most 8192 characters/],
  ])("refuses %j at submission", (http, why) => {
    expect(() => validateSpec({ kind: "HTTP", http } as Parameters<typeof validateSpec>[0])).toThrow(why);
  });

  it("keeps tabs, spaces and Latin-1 in header values", () => {
    expect(validateSpec(spec({ "X-Note": "caf\u00e9\tau lait" })).http!.headers["X-Note"]).toBe("caf\u00e9\tau lait");
  });
});

describe("signatures: the receiver's check", () => {
  it("answers false, never throws, for a forged v1 of the right length that is not hex", () => {
    const good = signatureOf("secret", 1_000, "run1", "body");
    expect(verifySignature(`t=1000,v1=${"zz".repeat(32)}`, "secret", "run1", "body", 1_000)).toBe(false);
    expect(verifySignature(`t=1000,v1=${"g".repeat(64)},v1=${good}`, "secret", "run1", "body", 1_000)).toBe(true);
    expect(verifySignature(`t=1000,v1=${good.slice(0, 62)}zz`, "secret", "run1", "body", 1_000)).toBe(false);
  });
});

describe("BINARY: installing the program", () => {
  it("never writes through a leftover .kairos-program symlink", async () => {
    const dir = mkdtempSync(join(tmpdir(), "attack-install-"));
    const work = join(dir, "work");
    const victim = join(dir, "victim");
    const artifact = join(dir, "cached");
    writeFileSync(victim, "the host's file\n");
    writeFileSync(artifact, "#!/bin/sh\necho pwned\n");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(work);
    symlinkSync(victim, join(work, ".kairos-program"));
    const spec = { kind: "BINARY", binary: { artifact: { id: "a", sha256: "x", size: 1, blobKey: "k" }, args: [] } } as unknown as JobSpec;
    await expect(installProgram(spec, work, { fetch: async () => artifact })).rejects.toThrow();
    expect(readFileSync(victim, "utf8")).toBe("the host's file\n");
  });
});

describe("over the API", () => {
  const t = useTestApp({ env: { KAIROS_SANDBOX: "bubblewrap", KAIROS_HTTP_JOB_ALLOWED_CIDRS: "127.0.0.1/32" } });

  it("a user's requests are signed with their own secret only, and no query shows a secret", async () => {
    const rotate = `mutation { rotateHttpSigningSecret { secret } }`;
    const victim = await makeUser(t.app, t.admin, `victim-${Math.random().toString(36).slice(2, 8)}`);
    const mallory = await makeUser(t.app, t.admin, `mallory-${Math.random().toString(36).slice(2, 8)}`);
    const victimSecret = (await gqlOk<{ rotateHttpSigningSecret: { secret: string } }>(t.app.url, rotate, {}, victim.token)).rotateHttpSigningSecret.secret;
    const mallorySecret = (await gqlOk<{ rotateHttpSigningSecret: { secret: string } }>(t.app.url, rotate, {}, mallory.token)).rotateHttpSigningSecret.secret;
    expect(mallorySecret).not.toBe(victimSecret);
    // A leaked API key (a CI's, with every scope) cannot rotate: rotating shows the new secret,
    // with which the key's holder could sign as the user to every receiver of theirs.
    const key = await gqlOk<{ createApiKey: { key: string } }>(t.app.url, `mutation { createApiKey(name: "ci", scope: READ_WRITE) { key } }`, {}, victim.token);
    const byKey = await gql(t.app.url, rotate, {}, key.createApiKey.key);
    expect(byKey.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect(byKey.data?.rotateHttpSigningSecret ?? null).toBeNull();
    const jobId = await submitJob(t.app.url, victim.token, { kind: "HTTP", timeout: "PT10S", http: { url: `http://127.0.0.1:${port}/echo`, body: "pay" } });
    const run = await finishedRun(t.app.url, victim.token, jobId);
    expect(run.status).toBe("SUCCEEDED");
    const req = received.find((r) => r.runId === run.id)!;
    const now = Math.floor(Date.now() / 1000);
    expect(verifySignature(req.signature, victimSecret, run.id, "pay", now)).toBe(true);
    expect(verifySignature(req.signature, mallorySecret, run.id, "pay", now)).toBe(false);
    // The secret is in no type but the one rotateHttpSigningSecret returns.
    const schema = await gqlOk<{ __schema: { types: Array<{ name: string; fields: Array<{ name: string }> | null }> } }>(t.app.url, `{ __schema { types { name fields { name } } } }`, {}, mallory.token);
    const withSecret = schema.__schema.types.filter((ty) => !ty.name.startsWith("__") && (ty.fields ?? []).some((f) => /secret|signing|hmac/i.test(f.name)));
    expect(withSecret.map((ty) => `${ty.name}: ${ty.fields!.filter((f) => /secret|signing|hmac/i.test(f.name)).map((f) => f.name).join(", ")}`).sort()).toEqual([
      "HttpSigningSecret: secret",
      "Mutation: rotateHttpSigningSecret",
    ]);
  });

  it("refuses a header value Node cannot send with BAD_USER_INPUT, and keeps no job", async () => {
    const name = `bad-header-${Math.random().toString(36).slice(2)}`;
    const r = await gql(
      t.app.url,
      `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
      { input: { name, schedule: { kind: "ONCE" }, spec: { kind: "HTTP", http: { url: "https://example.com/", headers: { "X-Note": "caf\u20ac" } } } } },
      t.admin,
    );
    expect(r.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    expect(r.errors?.[0]?.message).toMatch(/spec\.http\.headers: value of "X-Note"/);
    const jobs = await gql<{ jobs: { edges: Array<{ node: { name: string } }> } }>(t.app.url, `{ jobs(first: 100) { edges { node { name } } } }`, {}, t.admin);
    expect(jobs.data?.jobs.edges.map((e) => e.node.name)).not.toContain(name);
  });

  it("a SCRIPT sees none of the server's secrets: /proc/*/environ, its own environment, the JWT secret", async () => {
    const jwtSecret = readFileSync(join(t.app.config.dataDir, "jwt-secret"), "utf8").trim();
    const source = [
      "import os, glob",
      "out = []",
      "for f in glob.glob('/proc/*/environ') + glob.glob('/proc/*/cmdline'):",
      "    try: out.append(open(f, 'rb').read().decode('latin-1'))",
      "    except Exception as e: out.append(repr(e))",
      `for f in ['${t.app.config.dataDir}/jwt-secret', '../jwt-secret', '../../jwt-secret']:`,
      "    try: out.append(open(f).read())",
      "    except Exception as e: out.append(repr(e))",
      "out.append(repr(sorted(os.environ)))",
      "print('\\n'.join(out))",
    ].join("\n");
    const run = await finishedRun(t.app.url, t.admin, await submitJob(t.app.url, t.admin, { kind: "SCRIPT", interpreter: "python3", source }));
    expect(run.status).toBe("SUCCEEDED");
    expect(run.outputTail).not.toContain(jwtSecret);
    expect(run.outputTail).not.toMatch(/KAIROS_JWT|KAIROS_ADMIN|KAIROS_DATA_DIR|S3_|AWS_/);
    expect(run.outputTail).toMatch(/'KAIROS_RUN_ID'/);
  });
});
