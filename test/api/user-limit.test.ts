/**
 * Administrators set a user's concurrency limit through the API (`createUser(maxConcurrentRuns)`,
 * `setUserConcurrencyLimit`); bad values are refused, and raising the limit starts the runs that
 * were waiting for it at once. test/chaos/user-limit.test.ts covers fairness under a burst.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { gql, gqlOk, login } from "../helpers/graphql.js";

const t = useTestApp();

const SET = `mutation($u: ID!, $n: Int) { setUserConcurrencyLimit(userId: $u, maxConcurrentRuns: $n) { id username maxConcurrentRuns } }`;

async function createUser(username: string, maxConcurrentRuns?: number | null): Promise<string> {
  const r = await gqlOk<{ createUser: { id: string; maxConcurrentRuns: number | null } }>(
    t.app.url,
    `mutation($u: String!, $n: Int) { createUser(username: $u, password: "password-${username}", maxConcurrentRuns: $n) { id maxConcurrentRuns } }`,
    { u: username, n: maxConcurrentRuns },
    t.admin,
  );
  expect(r.createUser.maxConcurrentRuns).toBe(maxConcurrentRuns ?? null);
  return r.createUser.id;
}

describe("per-user concurrency limit through the API", () => {
  it("sets, shows and removes a limit; refuses bad values and non-administrators", async () => {
    const id = await createUser("limited", 3);
    const set = await gqlOk<{ setUserConcurrencyLimit: { maxConcurrentRuns: number | null } }>(t.app.url, SET, { u: id, n: 7 }, t.admin);
    expect(set.setUserConcurrencyLimit.maxConcurrentRuns).toBe(7);
    const listed = await gqlOk<{ users: { edges: Array<{ node: { username: string; maxConcurrentRuns: number | null } }> } }>(
      t.app.url, `{ users(filter: { usernamePrefix: "limited" }) { edges { node { username maxConcurrentRuns } } } }`, {}, t.admin);
    expect(listed.users.edges.map((e) => e.node)).toEqual([{ username: "limited", maxConcurrentRuns: 7 }]);

    for (const bad of [0, -2, 100_001]) {
      const r = await gql(t.app.url, SET, { u: id, n: bad }, t.admin);
      expect(r.errors?.[0]?.extensions?.code, JSON.stringify(r.errors)).toBe("BAD_USER_INPUT");
      expect(r.errors?.[0]?.extensions?.field).toBe("maxConcurrentRuns");
      expect(r.errors?.[0]?.message).toMatch(/1 to 100000, or null/);
    }
    const badCreate = await gql(t.app.url, `mutation { createUser(username: "badlimit", password: "password-x", maxConcurrentRuns: 0) { id } }`, {}, t.admin);
    expect(badCreate.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    const missing = await gql(t.app.url, SET, { u: "no-such-user", n: 2 }, t.admin);
    expect(missing.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");

    // Nothing was written by the refused calls.
    const doc = await t.app.services.mongo.c.users.findOne({ _id: id });
    expect(doc?.maxConcurrentRuns).toBe(7);
    expect(await t.app.services.mongo.c.users.countDocuments({ username: "badlimit" })).toBe(0);

    const self = await login(t.app.url, "limited", "password-limited");
    const forbidden = await gql(t.app.url, SET, { u: id, n: null }, self);
    expect(forbidden.errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    expect((await gql(t.app.url, `{ users { edges { node { id } } } }`, {}, self)).errors?.[0]?.extensions?.code).toBe("FORBIDDEN");

    const removed = await gqlOk<{ setUserConcurrencyLimit: { maxConcurrentRuns: number | null } }>(t.app.url, SET, { u: id, n: null }, t.admin);
    expect(removed.setUserConcurrencyLimit.maxConcurrentRuns).toBeNull();
  });

  it("holds runs over the limit and starts them as soon as the limit is raised", async () => {
    const id = await createUser("queued-up", 1);
    const token = await login(t.app.url, "queued-up", "password-queued-up");
    const jobIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await gqlOk<{ createJob: { id: string } }>(
        t.app.url,
        `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`,
        { i: { name: `long-${i}`, schedule: { kind: "ONCE" }, spec: { command: "sleep 20" } } },
        token,
      );
      jobIds.push(r.createJob.id);
    }
    const runs = t.app.services.mongo.c.runs;
    const count = (status: string) => runs.countDocuments({ jobId: { $in: jobIds }, status: status as never });
    // One runs, two wait for the limit.
    await until(async () => (await count("RUNNING")) === 1 && (await runs.countDocuments({ jobId: { $in: jobIds }, heldByLimit: true })) === 2, 15_000);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await count("RUNNING")).toBe(1);

    await gqlOk(t.app.url, SET, { u: id, n: 3 }, t.admin);
    // The first run sleeps 20 s: the other two can only be running this soon because of the raise.
    await until(async () => (await count("RUNNING")) === 3, 10_000);
    const running = await runs.find({ jobId: { $in: jobIds }, status: "RUNNING" }).toArray();
    for (const r of running) await gqlOk(t.app.url, `mutation($r: ID!) { cancelRun(id: $r) { id } }`, { r: r._id }, token);
  });
});

async function until(cond: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
