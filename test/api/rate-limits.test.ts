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
import { walk, type Conn } from "../helpers/paging.js";
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

const LOCKOUTS = `query($first: Int, $after: String) {
  loginLockouts(first: $first, after: $after) { edges { cursor node { dimension key until failures } } pageInfo { hasNextPage endCursor } } }`;

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
  const lockoutPage = async (vars: Record<string, unknown>): Promise<Conn<Lockout>> => (await gqlOk<{ loginLockouts: Conn<Lockout> }>(app.url, LOCKOUTS, vars, admin)).loginLockouts;
  const lockouts = async (): Promise<Lockout[]> => (await lockoutPage({ first: 100 })).edges.map((e) => e.node);
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
    // `first` caps the rows; the next page has the other.
    const one = await lockoutPage({ first: 1 });
    expect(one.edges).toHaveLength(1);
    expect(one.pageInfo.hasNextPage).toBe(true);
    const other = await lockoutPage({ first: 1, after: one.pageInfo.endCursor });
    expect([...one.edges, ...other.edges].map((e) => e.node.dimension).sort()).toEqual(["ADDRESS", "USER"]);
    expect(other.pageInfo.hasNextPage).toBe(false);

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
    for (const first of [0, 101]) {
      const r = await postGql(app.url, LOCKOUTS, { token: admin, variables: { first } });
      expect(code(r)).toBe("BAD_USER_INPUT");
      expect(r.json.errors[0].message).toBe(`first: must be from 1 to 100 (got ${first})`);
    }
    const nodesCursor = Buffer.from(JSON.stringify(["node", Date.now(), "id"])).toString("base64url");
    const runsCursor = Buffer.from(JSON.stringify([Date.now(), "id"])).toString("base64url");
    for (const after of ["not-a-cursor", nodesCursor, runsCursor, Buffer.from(JSON.stringify([Date.now(), "someone", "k"])).toString("base64url")]) {
      const r = await postGql(app.url, LOCKOUTS, { token: admin, variables: { after } });
      expect(code(r), after).toBe("BAD_USER_INPUT");
      expect(r.json.errors[0].message).toBe("after: not a cursor returned by this list (use its pageInfo.endCursor)");
    }
  });

  it("pages through the lockouts, latest-ending first: none twice, none that stayed skipped, while others begin and are lifted", async () => {
    // Six user names locked out from six addresses: twelve rows, for the hour.
    const names = Array.from({ length: 6 }, (_, i) => `pager-${i}`);
    const addr = (i: number) => `198.51.100.${10 + i}`;
    await Promise.all(names.map((n, i) => tryLogin(app, n, "wrong-1", addr(i))));
    await sleep(1_100);
    await Promise.all(names.map((n, i) => tryLogin(app, n, "wrong-2", addr(i))));
    const all = await lockouts();
    expect(all).toHaveLength(12);
    const key = (r: Lockout) => `${r.dimension}:${r.key}`;
    const lifted: string[] = [];
    const seen = await walk(
      (after) => lockoutPage({ first: 5, after }),
      async (n) => {
        if (n !== 1) return;
        // Lifted after the first page: a row already read and a row not read yet (the last).
        const last = all.at(-1)!;
        expect((await postGql(app.url, UNLOCK, { token: admin, variables: last.dimension === "USER" ? { u: last.key } : { a: last.key } })).json.data).toEqual({ unlockLogin: true });
        lifted.push(key(last));
        const read = all[0]!;
        await postGql(app.url, UNLOCK, { token: admin, variables: read.dimension === "USER" ? { u: read.key } : { a: read.key } });
        // A lockout that begins now ends after every one listed: before the cursor, so not in this walk.
        await tryLogin(app, "pager-new", "wrong-1", "198.51.100.99");
        await sleep(1_100);
        await tryLogin(app, "pager-new", "wrong-2", "198.51.100.99");
      },
    );
    const keys = seen.map(key);
    expect(new Set(keys).size, "no row twice").toBe(keys.length);
    expect(keys).toEqual(all.map(key).filter((k) => !lifted.includes(k)));
    expect(keys.some((k) => k.includes("pager-new") || k.includes("198.51.100.99"))).toBe(false);
    expect((await lockouts()).slice(0, 2).map(key).sort()).toEqual(["ADDRESS:198.51.100.99", "USER:pager-new"]);
    for (const r of await lockouts()) await postGql(app.url, UNLOCK, { token: admin, variables: r.dimension === "USER" ? { u: r.key } : { a: r.key } });
  });

  it("orders waits that end in the same millisecond by user names first, then key, across pages", async () => {
    // Waits recorded directly (as a failed login records them), many ending at the same instants.
    const guard = app.services.limits.login as unknown as Record<"user" | "address", { blocked: { add(key: string, until: number): Promise<void>; remove(key: string): Promise<void> } }>;
    const end = Date.now() + 600_000;
    const rows: Array<{ dimension: "user" | "address"; key: string; until: number }> = [];
    for (let i = 0; i < 24; i++) rows.push({ dimension: i % 3 === 0 ? "address" : "user", key: `tie-${String(23 - i).padStart(2, "0")}`, until: end - (i % 2) * 1_000 });
    for (const r of rows) await guard[r.dimension].blocked.add(r.key, r.until);
    const expected = [...rows]
      .sort((a, b) => b.until - a.until || (a.dimension === b.dimension ? (a.key < b.key ? -1 : 1) : a.dimension === "user" ? -1 : 1))
      .map((r) => `${r.dimension.toUpperCase()}:${r.key}`);
    for (const first of [1, 5, 7, 12]) {
      const seen = await walk((after) => lockoutPage({ first, after }), async () => undefined);
      expect(seen.map((r) => `${r.dimension}:${r.key}`), `first: ${first}`).toEqual(expected);
      expect(seen.every((r) => Date.parse(r.until) === end || Date.parse(r.until) === end - 1_000)).toBe(true);
    }
    for (const r of rows) await guard[r.dimension].blocked.remove(r.key);
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
