/**
 * Per-user isolation and authentication: a second user can neither read, change nor subscribe to
 * the first user's job, and gets NOT_FOUND (no existence leak); unauthenticated and forged
 * requests get UNAUTHENTICATED with no data.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import jwt from "jsonwebtoken";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { collect, gql, gqlOk, login, wsClient } from "../helpers/graphql.js";

let app: TestApp;
let admin: string;
let alice: string;
let bob: string;
let aliceJob: string;
let aliceRun: string;

beforeAll(async () => {
  app = await startTestApp();
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  for (const u of ["alice", "bob"]) {
    await gqlOk(app.url, `mutation($u: String!) { createUser(username: $u, password: "password-${"x".repeat(4)}", role: USER) { id } }`, { u }, admin);
  }
  alice = await login(app.url, "alice", "password-xxxx");
  bob = await login(app.url, "bob", "password-xxxx");
  aliceJob = (
    await gqlOk<{ createJob: { id: string } }>(
      app.url,
      `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
      { input: { name: "private", schedule: { kind: "INTERVAL", every: "PT1H" }, spec: { kind: "COMMAND", command: "echo secret" } } },
      alice,
    )
  ).createJob.id;
  aliceRun = (await gqlOk<{ triggerJob: { id: string } }>(app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: aliceJob }, alice)).triggerJob.id;
});

afterAll(async () => {
  await app?.dispose();
});

const code = (r: { errors?: Array<{ extensions?: { code?: string } }> }) => r.errors?.[0]?.extensions?.code;

describe("per-user isolation", () => {
  it("hides another user's job, runs and run from reads", async () => {
    const job = await gql(app.url, `query($id: ID!) { job(id: $id) { id name } }`, { id: aliceJob }, bob);
    expect(code(job)).toBe("NOT_FOUND");
    expect(job.data).toBeNull();
    const runs = await gql(app.url, `query($id: ID!) { runs(jobId: $id) { edges { node { id } } } }`, { id: aliceJob }, bob);
    expect(code(runs)).toBe("NOT_FOUND");
    const run = await gql(app.url, `query($id: ID!) { run(id: $id) { id outputTail } }`, { id: aliceRun }, bob);
    expect(code(run)).toBe("NOT_FOUND");
    const list = await gqlOk<{ jobs: { edges: unknown[] } }>(app.url, `{ jobs { edges { node { id } } } }`, {}, bob);
    expect(list.jobs.edges).toEqual([]);
    const upcoming = await gqlOk<{ upcomingFires: { edges: unknown[] } }>(app.url, `{ upcomingFires(within: "PT2H") { edges { node { at } } } }`, {}, bob);
    expect(upcoming.upcomingFires.edges).toEqual([]);
  });

  it("refuses every change to another user's job or run", async () => {
    const ops: Array<[string, Record<string, unknown>]> = [
      [`mutation($id: ID!) { pauseJob(id: $id) { id } }`, { id: aliceJob }],
      [`mutation($id: ID!) { resumeJob(id: $id) { id } }`, { id: aliceJob }],
      [`mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: aliceJob }],
      [`mutation($id: ID!) { deleteJob(id: $id) }`, { id: aliceJob }],
      [`mutation($id: ID!) { updateJob(id: $id, input: { name: "mine" }) { id } }`, { id: aliceJob }],
      [`mutation($id: ID!, $at: DateTime!) { rescheduleJob(id: $id, at: $at) { id } }`, { id: aliceJob, at: new Date(Date.now() + 60_000).toISOString() }],
      [`mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: aliceRun }],
      [`mutation($id: ID!) { retryRun(id: $id) { id } }`, { id: aliceRun }],
    ];
    for (const [q, v] of ops) {
      const r = await gql(app.url, q, v, bob);
      expect(code(r), q).toBe("NOT_FOUND");
      expect(r.data).toBeNull();
    }
    const still = await gqlOk<{ job: { name: string; paused: boolean } }>(app.url, `query($id: ID!) { job(id: $id) { name paused } }`, { id: aliceJob }, alice);
    expect(still.job).toEqual({ name: "private", paused: false });
  });

  it("refuses a subscription to another user's job and filters the firehose", async () => {
    const client = wsClient(app.wsUrl, bob);
    try {
      const sub = collect(client, `subscription($id: ID) { runUpdated(jobId: $id) { id } }`, { id: aliceJob }, () => false, 1_000);
      const { events, errors } = await sub.done;
      expect(events).toEqual([]);
      expect(JSON.stringify(errors)).toContain("NOT_FOUND");

      // Bob's own firehose sees none of Alice's events.
      const firehose = collect<{ runUpdated: { jobId: string } }>(client, `subscription { runUpdated { jobId } }`, {}, () => false, 2_000);
      await firehose.ready;
      await gqlOk(app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: aliceJob }, alice);
      const seen = await firehose.done;
      expect(seen.events).toEqual([]);
    } finally {
      await client.dispose();
    }
  });

  it("lets an admin see every user's jobs", async () => {
    const r = await gqlOk<{ job: { id: string; owner: { username: string } } }>(app.url, `query($id: ID!) { job(id: $id) { id owner { username } } }`, { id: aliceJob }, admin);
    expect(r.job.owner.username).toBe("alice");
  });

  it("only lets admins create users", async () => {
    const r = await gql(app.url, `mutation { createUser(username: "mallory", password: "password-xxxx") { id } }`, {}, bob);
    expect(code(r)).toBe("FORBIDDEN");
  });
});

describe("authentication", () => {
  it("answers UNAUTHENTICATED without a token, with a bad password, and with forged or expired tokens", async () => {
    expect(code(await gql(app.url, `{ jobs { edges { node { id } } } }`))).toBe("UNAUTHENTICATED");
    const bad = await gql(app.url, `mutation { login(username: "alice", password: "wrong-password") { token } }`);
    expect(code(bad)).toBe("UNAUTHENTICATED");
    expect(bad.errors?.[0]?.message).toBe("invalid username or password");
    const unknown = await gql(app.url, `mutation { login(username: "nobody", password: "wrong-password") { token } }`);
    expect(unknown.errors?.[0]?.message).toBe("invalid username or password");

    const claims = jwt.decode(alice) as jwt.JwtPayload;
    const forged = jwt.sign({ ...claims, role: "ADMIN" }, "not-the-secret-not-the-secret-not-the-secret");
    expect(code(await gql(app.url, `{ me { id } }`, {}, forged))).toBe("UNAUTHENTICATED");
    const unsigned = jwt.sign({ ...claims, role: "ADMIN" }, "", { algorithm: "none" } as jwt.SignOptions);
    expect(code(await gql(app.url, `{ me { id } }`, {}, unsigned))).toBe("UNAUTHENTICATED");
    const secret = readFileSync(join(app.config.dataDir, "jwt-secret"), "utf8").trim();
    const { exp: _exp, iat: _iat, ...rest } = claims;
    const expired = jwt.sign({ ...rest, exp: Math.floor(Date.now() / 1000) - 10 }, secret, { algorithm: "HS256" });
    const exp = await gql(app.url, `{ me { id } }`, {}, expired);
    expect(code(exp)).toBe("UNAUTHENTICATED");
    expect(exp.errors?.[0]?.message).toMatch(/expired/);
    const wrongAudience = jwt.sign({ ...rest, aud: "someone-else" }, secret, { algorithm: "HS256", expiresIn: 60 });
    expect(code(await gql(app.url, `{ me { id } }`, {}, wrongAudience))).toBe("UNAUTHENTICATED");
    const me = await gqlOk<{ me: { username: string; role: string } }>(app.url, `{ me { username role } }`, {}, alice);
    expect(me.me).toEqual({ username: "alice", role: "USER" });
  });

  it("refuses a subscription without a token", async () => {
    const client = wsClient(app.wsUrl);
    try {
      const { errors } = await collect(client, `subscription { runUpdated { id } }`, {}, () => false, 1_000).done;
      expect(JSON.stringify(errors)).toContain("UNAUTHENTICATED");
    } finally {
      await client.dispose();
    }
  });
});
