/**
 * Rate limits (issue #12) over the real transports: failed logins per user name and per client
 * address earn a growing wait and then a lockout that only an administrator (or time) lifts;
 * requests and job submissions are budgeted per user, and one user's spent budget does not touch
 * another's. Refusals are RATE_LIMITED with retryAfterSeconds, and HTTP 429 with Retry-After when
 * the whole request is refused. The login tests run on both counter stores (in memory, as in dev,
 * and Redis, as in the distributed roles).
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { collect, gqlOk, login, wsClient } from "../helpers/graphql.js";
import { postGql, type RawResponse } from "../helpers/http.js";

const LOGIN = `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`;
const UNLOCK = `mutation($u: String, $a: String) { unlockLogin(username: $u, address: $a) }`;
const PASSWORD = "password-for-tests";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tryLogin(app: TestApp, username: string, password: string, address?: string): Promise<RawResponse> {
  return postGql(app.url, LOGIN, { variables: { u: username, p: password }, headers: address ? { "x-forwarded-for": address } : {} });
}

function code(r: RawResponse): string | undefined {
  return r.json?.errors?.[0]?.extensions?.code;
}

/** Asserts a whole-request refusal: 429, Retry-After, and the GraphQL envelope with RATE_LIMITED. */
function expectRateLimited(r: RawResponse, limit: string): number {
  expect(r.status, r.text).toBe(429);
  const e = r.json.errors[0];
  expect(e.extensions).toMatchObject({ code: "RATE_LIMITED", limit });
  const wait = e.extensions.retryAfterSeconds as number;
  expect(wait).toBeGreaterThanOrEqual(1);
  expect(r.headers.get("retry-after")).toBe(String(wait));
  return wait;
}

async function createUsers(app: TestApp, admin: string, names: string[]): Promise<void> {
  for (const u of names) {
    await gqlOk(app.url, `mutation($u: String!) { createUser(username: $u, password: "${PASSWORD}", role: USER) { id } }`, { u }, admin);
  }
}

describe.each([
  { store: "memory", redisUrl: undefined as string | undefined },
  { store: "Redis", redisUrl: "redis" },
])("login protection per user name ($store counters)", ({ redisUrl }) => {
  let app: TestApp;
  let admin: string;
  beforeAll(async () => {
    app = await startTestApp({
      redisUrl: redisUrl ? inject("redisUrl") : undefined,
      env: {
        KAIROS_LOGIN_FREE_FAILURES: "1",
        KAIROS_LOGIN_LOCKOUT_AFTER: "3",
        KAIROS_LOGIN_DELAY: "PT1S",
        KAIROS_LOGIN_LOCKOUT: "PT1H",
      },
    });
    admin = await login(app.url, ADMIN.username, ADMIN.password);
    await createUsers(app, admin, ["victim", "bystander"]);
  });
  afterAll(async () => {
    await app?.dispose();
  });

  it("makes each failed attempt wait longer, then locks the name out until an administrator lifts it", async () => {
    // Failure 1 (the free one is used up): the next attempt must wait 1 s.
    expect(code(await tryLogin(app, "victim", "wrong-1"))).toBe("UNAUTHENTICATED");
    const early = await tryLogin(app, "victim", "wrong-2");
    expect(expectRateLimited(early, "login")).toBe(1);
    expect(early.json.errors[0].message).toMatch(/too many failed logins for user "victim"; wait 1 s/);
    expect(early.json.data).toBeNull();

    // Failure 2: the wait doubles.
    await sleep(1_100);
    expect(code(await tryLogin(app, "victim", "wrong-2"))).toBe("UNAUTHENTICATED");
    expect(expectRateLimited(await tryLogin(app, "victim", "wrong-3"), "login")).toBe(2);

    // Failure 3: locked out; even the right password is refused, over HTTP and over WebSocket.
    await sleep(2_100);
    expect(code(await tryLogin(app, "victim", "wrong-3"))).toBe("UNAUTHENTICATED");
    const locked = await tryLogin(app, "victim", PASSWORD);
    expect(expectRateLimited(locked, "login")).toBeGreaterThan(3_000);
    expect(locked.json.errors[0].message).toMatch(/locked out.*unlockLogin/);
    if (redisUrl) {
      // The lockout lives in Redis, where every API instance sees it.
      const redis = new Redis(inject("redisUrl"));
      try {
        expect(await redis.keys(`${app.config.redisPrefix}:rl:login-wait-user:victim`)).toHaveLength(1);
      } finally {
        redis.disconnect();
      }
    }
    const ws = wsClient(app.wsUrl);
    try {
      const { errors } = await collect(ws, LOGIN, { u: "victim", p: PASSWORD }, () => true, 5_000).done;
      expect(JSON.stringify(errors)).toMatch(/RATE_LIMITED/);
    } finally {
      await ws.dispose();
    }

    // Another name from the same address is not affected.
    expect((await tryLogin(app, "bystander", PASSWORD)).json.data.login.token).toBeTruthy();

    // A USER may not lift it; an administrator may, and then the right password works again.
    const bystander = await login(app.url, "bystander", PASSWORD);
    const forbidden = await postGql(app.url, UNLOCK, { token: bystander, variables: { u: "victim" } });
    expect(code(forbidden)).toBe("FORBIDDEN");
    expect(code(await tryLogin(app, "victim", PASSWORD))).toBe("RATE_LIMITED");
    const lifted = await postGql(app.url, UNLOCK, { token: admin, variables: { u: "victim" } });
    expect(lifted.json.data).toEqual({ unlockLogin: true });
    expect((await tryLogin(app, "victim", PASSWORD)).json.data.login.token).toBeTruthy();
    // Nothing left to lift.
    expect((await postGql(app.url, UNLOCK, { token: admin, variables: { u: "victim" } })).json.data).toEqual({ unlockLogin: false });
  });

  it("clears a name's failures on a successful login", async () => {
    expect(code(await tryLogin(app, "bystander", "wrong"))).toBe("UNAUTHENTICATED");
    await sleep(1_100);
    expect((await tryLogin(app, "bystander", PASSWORD)).status).toBe(200);
    // Had the failure been kept, this one would lock nothing but earn a 2 s wait; it earns 1 s.
    expect(code(await tryLogin(app, "bystander", "wrong"))).toBe("UNAUTHENTICATED");
    expect(expectRateLimited(await tryLogin(app, "bystander", PASSWORD), "login")).toBe(1);
  });
});

describe("login protection per client address", () => {
  let app: TestApp;
  let admin: string;
  beforeAll(async () => {
    app = await startTestApp({
      env: {
        // One trusted proxy: the client address is the last X-Forwarded-For entry.
        KAIROS_TRUST_PROXY: "1",
        KAIROS_LOGIN_FREE_FAILURES: "100",
        KAIROS_LOGIN_LOCKOUT_AFTER: "200",
        KAIROS_LOGIN_ADDRESS_FREE_FAILURES: "2",
        KAIROS_LOGIN_ADDRESS_LOCKOUT_AFTER: "3",
        KAIROS_LOGIN_DELAY: "PT1S",
      },
    });
    admin = await login(app.url, ADMIN.username, ADMIN.password);
    await createUsers(app, admin, ["carol"]);
  });
  afterAll(async () => {
    await app?.dispose();
  });

  it("locks out an address that tries many names, not the names or other addresses, until lifted", async () => {
    const stuffer = "203.0.113.7";
    const neighbour = "203.0.113.8";
    expect(code(await tryLogin(app, "u1", "guess", stuffer))).toBe("UNAUTHENTICATED");
    expect(code(await tryLogin(app, "u2", "guess", stuffer))).toBe("UNAUTHENTICATED");
    // Two failures from the address: its next attempt waits, whatever the name.
    const waiting = await tryLogin(app, "u3", "guess", stuffer);
    expectRateLimited(waiting, "login");
    expect(waiting.json.errors[0].message).toMatch(/this client address/);
    await sleep(1_100);
    expect(code(await tryLogin(app, "u3", "guess", stuffer))).toBe("UNAUTHENTICATED");
    // Three: locked out, even for a real user with the right password.
    const locked = await tryLogin(app, "carol", PASSWORD, stuffer);
    expect(expectRateLimited(locked, "login")).toBeGreaterThan(60);
    expect(locked.json.errors[0].message).toMatch(/locked out/);
    // The same user from another address logs in.
    expect((await tryLogin(app, "carol", PASSWORD, neighbour)).json.data.login.token).toBeTruthy();

    const lifted = await postGql(app.url, UNLOCK, { token: admin, variables: { a: stuffer } });
    expect(lifted.json.data).toEqual({ unlockLogin: true });
    expect((await tryLogin(app, "carol", PASSWORD, stuffer)).json.data.login.token).toBeTruthy();
    // unlockLogin with nothing to name is bad input.
    expect(code(await postGql(app.url, UNLOCK, { token: admin }))).toBe("BAD_USER_INPUT");
  });
});

const LOCKOUTS = `query($first: Int) { loginLockouts(first: $first) { dimension key until failures } }`;

interface Lockout {
  dimension: "USER" | "ADDRESS";
  key: string;
  until: string;
  failures: number | null;
}

describe.each([
  { store: "memory", redisUrl: undefined as string | undefined },
  { store: "Redis", redisUrl: "redis" },
])("login lockouts listed for administrators ($store counters)", ({ redisUrl }) => {
  let app: TestApp;
  let admin: string;
  const lockouts = async (): Promise<Lockout[]> => (await gqlOk<{ loginLockouts: Lockout[] }>(app.url, LOCKOUTS, {}, admin)).loginLockouts;
  beforeAll(async () => {
    app = await startTestApp({
      redisUrl: redisUrl ? inject("redisUrl") : undefined,
      env: {
        KAIROS_TRUST_PROXY: "1",
        KAIROS_LOGIN_FREE_FAILURES: "1",
        KAIROS_LOGIN_LOCKOUT_AFTER: "2",
        KAIROS_LOGIN_ADDRESS_FREE_FAILURES: "1",
        KAIROS_LOGIN_ADDRESS_LOCKOUT_AFTER: "2",
        KAIROS_LOGIN_DELAY: "PT1S",
        KAIROS_LOGIN_LOCKOUT: "PT1H",
      },
    });
    admin = await login(app.url, ADMIN.username, ADMIN.password);
    await createUsers(app, admin, ["dora"]);
  });
  afterAll(async () => {
    await app?.dispose();
  });

  it("lists the user name and the address after failed logins, with when each ends, until unlocked", async () => {
    expect(await lockouts()).toEqual([]);
    const before = Date.now();
    expect(code(await tryLogin(app, "dora", "wrong-1", "203.0.113.21"))).toBe("UNAUTHENTICATED");
    await sleep(1_100);
    expect(code(await tryLogin(app, "dora", "wrong-2", "203.0.113.21"))).toBe("UNAUTHENTICATED");
    const rows = await lockouts();
    expect(rows.map((r) => [r.dimension, r.key, r.failures]).sort()).toEqual([
      ["ADDRESS", "203.0.113.21", 2],
      ["USER", "dora", 2],
    ]);
    for (const r of rows) {
      // Locked out for the hour (KAIROS_LOGIN_LOCKOUT).
      expect(Date.parse(r.until) - before).toBeGreaterThan(3_500_000);
      expect(Date.parse(r.until) - Date.now()).toBeLessThanOrEqual(3_600_000);
    }
    if (redisUrl) {
      const redis = new Redis(inject("redisUrl"));
      try {
        expect(await redis.zscore(`${app.config.redisPrefix}:rl:login-locked:user`, "dora")).toBeTruthy();
      } finally {
        redis.disconnect();
      }
    }
    // `first` caps the rows.
    expect((await gqlOk<{ loginLockouts: Lockout[] }>(app.url, LOCKOUTS, { first: 1 }, admin)).loginLockouts).toHaveLength(1);

    // Unlocking the name removes its row only; then the address's.
    expect((await postGql(app.url, UNLOCK, { token: admin, variables: { u: "dora" } })).json.data).toEqual({ unlockLogin: true });
    expect((await lockouts()).map((r) => [r.dimension, r.key])).toEqual([["ADDRESS", "203.0.113.21"]]);
    expect((await postGql(app.url, UNLOCK, { token: admin, variables: { a: "203.0.113.21" } })).json.data).toEqual({ unlockLogin: true });
    expect(await lockouts()).toEqual([]);
  });

  it("drops a wait once it has ended, newest-ending first while they last", async () => {
    expect(code(await tryLogin(app, "nobody-1", "wrong", "203.0.113.31"))).toBe("UNAUTHENTICATED");
    const waits = await lockouts();
    expect(waits.map((r) => [r.dimension, r.key, r.failures]).sort()).toEqual([
      ["ADDRESS", "203.0.113.31", 1],
      ["USER", "nobody-1", 1],
    ]);
    const ends = waits.map((r) => Date.parse(r.until));
    expect([...ends].sort((a, b) => b - a)).toEqual(ends);
    await sleep(1_200);
    expect(await lockouts()).toEqual([]);
  });

  it("is for administrators only", async () => {
    const dora = await login(app.url, "dora", PASSWORD);
    expect(code(await postGql(app.url, LOCKOUTS, { token: dora }))).toBe("FORBIDDEN");
    expect(code(await postGql(app.url, LOCKOUTS, {}))).toBe("UNAUTHENTICATED");
    expect(code(await postGql(app.url, LOCKOUTS, { token: admin, variables: { first: 101 } }))).toBe("BAD_USER_INPUT");
  });
});

describe("request and submission budgets per user (Redis counters)", () => {
  let app: TestApp;
  let alice: string;
  let bob: string;
  beforeAll(async () => {
    app = await startTestApp({
      redisUrl: inject("redisUrl"),
      env: { KAIROS_RATE_REQUESTS: "12/PT1M", KAIROS_RATE_SUBMISSIONS: "2/PT1M" },
    });
    const admin = await login(app.url, ADMIN.username, ADMIN.password);
    await createUsers(app, admin, ["alice", "bob"]);
    alice = await login(app.url, "alice", PASSWORD);
    bob = await login(app.url, "bob", PASSWORD);
  });
  afterAll(async () => {
    await app?.dispose();
  });

  const CREATE = `mutation($n: String!) { createJob(input: {name: $n, schedule: {kind: INTERVAL, every: "PT1H"}, spec: {kind: COMMAND, command: "true"}}) { id } }`;

  it("refuses a user's submissions past the budget with 429, and not another user's", async () => {
    const first = await postGql(app.url, CREATE, { token: alice, variables: { n: "a1" } });
    const jobId = first.json.data.createJob.id as string;
    expect((await postGql(app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { token: alice, variables: { id: jobId } })).status).toBe(200);
    // Third submission in the minute (createJob, triggerJob and backfillJob share the budget).
    const refused = await postGql(app.url, CREATE, { token: alice, variables: { n: "a2" } });
    expectRateLimited(refused, "submissions");
    expect(refused.json.errors[0].message).toMatch(/too many submissions for user alice: at most 2 per PT1M/);
    const backfill = await postGql(app.url, `mutation($id: ID!) { backfillJob(id: $id, from: "2020-01-01T00:00:00Z", to: "2020-01-01T02:00:00Z") { requested } }`, {
      token: alice,
      variables: { id: jobId },
    });
    expectRateLimited(backfill, "submissions");
    // Nothing was created by the refused call.
    const jobs = await gqlOk<{ jobs: { edges: unknown[] } }>(app.url, `{ jobs { edges { node { id } } } }`, {}, alice);
    expect(jobs.jobs.edges).toHaveLength(1);
    // Bob's budget is his own.
    expect((await postGql(app.url, CREATE, { token: bob, variables: { n: "b1" } })).json.data.createJob.id).toBeTruthy();
  });

  it("refuses a user's requests past the budget before reading them, on HTTP and WebSocket, and not another user's", async () => {
    // alice has spent 5 of 12 requests (login is anonymous and counted by address).
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await postGql(app.url, `{ me { username } }`, { token: alice })).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(7);
    const refused = await postGql(app.url, `{ me { username } }`, { token: alice });
    expectRateLimited(refused, "requests");
    expect(refused.json.errors[0].message).toMatch(/too many requests for user alice: at most 12 per PT1M/);
    // Refused before the body is read: even a body that is not JSON gets the 429.
    const unread = await fetch(app.url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${alice}` }, body: "{not json" });
    expect(unread.status).toBe(429);

    const ws = wsClient(app.wsUrl, alice);
    try {
      const { events, errors } = await collect(ws, `{ me { username } }`, {}, () => true, 5_000).done;
      expect(events).toEqual([]);
      expect(JSON.stringify(errors)).toMatch(/"code":"RATE_LIMITED"/);
      expect(JSON.stringify(errors)).toMatch(/"retryAfterSeconds":\d+/);
    } finally {
      await ws.dispose();
    }

    const other = await postGql(app.url, `{ me { username } }`, { token: bob });
    expect(other.json.data).toEqual({ me: { username: "bob" } });
  });
});
