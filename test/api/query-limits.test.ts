/**
 * Query limits (issue #12): the documents that exhausted the dev server — 15 levels of
 * jobs → runs → job with first: 100, 1,000 aliases of nextFires(count: 100), 201 levels — are
 * refused in validation with the limit named, no resolver runs for them, and /healthz keeps
 * answering while a client sends nothing else. The same limits hold over WebSocket, subscriptions
 * have their own cost maximum, and legitimate queries under the limits still work.
 */
import "reflect-metadata";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobResolver } from "../../src/resolvers/job.resolver.js";
import { RunResolver } from "../../src/resolvers/run.resolver.js";
import { startTestApp, type TestApp, ADMIN } from "../helpers/app.js";
import { deepQuery, manyAliases, nestedJobsRuns } from "../helpers/abuse.js";
import { collect, gqlOk, login, wsClient } from "../helpers/graphql.js";
import { postGql, raw, sibling } from "../helpers/http.js";

let app: TestApp;
let user: string;
let jobId: string;
/** Calls of the resolvers the abusive documents select: counts whether any resolver ran. */
let jobReads = 0;

beforeAll(async () => {
  // Request budgets are tested in rate-limits.test.ts; here the abuser must meet the query limits alone.
  app = await startTestApp({ env: { KAIROS_RATE_REQUESTS: "off" } });
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  await gqlOk(app.url, `mutation { createUser(username: "mallory", password: "password-mallory", role: USER) { id } }`, {}, admin);
  user = await login(app.url, "mallory", "password-mallory");
  jobId = (
    await gqlOk<{ createJob: { id: string } }>(
      app.url,
      `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
      { input: { name: "cron", schedule: { kind: "CRON", cron: "* * * * *" }, spec: { kind: "COMMAND", command: "true" } } },
      user,
    )
  ).createJob.id;
  const spied: Array<[object, string]> = [
    [JobResolver.prototype, "job"],
    [JobResolver.prototype, "jobs"],
    [JobResolver.prototype, "runs"],
    [JobResolver.prototype, "nextFires"],
    [RunResolver.prototype, "job"],
  ];
  for (const [proto, name] of spied) {
    const p = proto as Record<string, (...args: unknown[]) => unknown>;
    const original = p[name]!;
    p[name] = function (this: unknown, ...args: unknown[]) {
      jobReads++;
      return original.apply(this, args);
    };
  }
});

afterAll(async () => {
  await app?.dispose();
});

type Err = { message: string; extensions?: Record<string, unknown> };

function firstError(body: { errors?: Err[]; data?: unknown }): Err {
  expect(body.errors?.length, JSON.stringify(body)).toBeGreaterThan(0);
  expect(body.data ?? null).toBeNull();
  return body.errors![0]!;
}

describe("query limits over HTTP", () => {
  it("refuses the 15-level jobs → runs → job query by depth, before any resolver runs", async () => {
    const before = jobReads;
    const r = await postGql(app.url, nestedJobsRuns(15), { token: user });
    expect(r.status).toBe(400);
    const e = firstError(r.json);
    expect(e.extensions).toMatchObject({ code: "GRAPHQL_VALIDATION_FAILED", limit: "maxDepth", max: 10 });
    expect(e.message).toMatch(/depth limit of 10 exceeded, found \d+ \(KAIROS_MAX_DEPTH=10\)/);
    expect(jobReads).toBe(before);
  });

  it("refuses a 201-level query, naming the depth found", async () => {
    const r = await postGql(app.url, deepQuery(201, jobId), { token: user });
    expect(r.status).toBe(400);
    const e = firstError(r.json);
    expect(e.extensions).toMatchObject({ code: "GRAPHQL_VALIDATION_FAILED", limit: "maxDepth" });
    expect(e.message).toMatch(/found 201/);
  });

  it("refuses 1,000 aliases of nextFires(count: 100) while parsing (token limit), and 21 aliases by the alias limit", async () => {
    const before = jobReads;
    const huge = await postGql(app.url, manyAliases(1000, jobId), { token: user });
    expect(huge.status).toBe(400);
    const e = firstError(huge.json);
    expect(e.extensions?.code).toBe("GRAPHQL_PARSE_FAILED");
    expect(e.message).toMatch(/more (that|than) 1000 tokens/);

    const wide = await postGql(app.url, manyAliases(21, jobId), { token: user });
    const w = firstError(wide.json);
    expect(w.extensions).toMatchObject({ code: "GRAPHQL_VALIDATION_FAILED", limit: "maxAliases", max: 20 });
    expect(w.message).toMatch(/Aliases limit of 20 exceeded, found 21 \(KAIROS_MAX_ALIASES=20\)/);
    expect(jobReads).toBe(before);
  });

  it("refuses a shallow query whose lists multiply past the cost maximum, with the cost found", async () => {
    const before = jobReads;
    const q = `{ jobs(first: 100) { edges { node { id runs(first: 100) { edges { node { id status } } } } } } }`;
    const r = await postGql(app.url, q, { token: user });
    expect(r.status).toBe(400);
    const e = firstError(r.json);
    expect(e.extensions).toMatchObject({ code: "GRAPHQL_VALIDATION_FAILED", limit: "cost", max: 10_000 });
    expect(e.extensions?.cost).toBeGreaterThan(10_000);
    expect(e.message).toMatch(/Operation cost limit of 10000 exceeded, found \d+ \(KAIROS_MAX_COST=10000\)/);
    // Variables count: the same shape with small pages passes.
    const ok = await postGql(app.url, `query($n: Int) { jobs(first: $n) { edges { node { id runs(first: $n) { edges { node { id } } } } } } }`, {
      token: user,
      variables: { n: 5 },
    });
    expect(ok.json.errors).toBeUndefined();
    expect(ok.json.data.jobs.edges).toHaveLength(1);
    const afterOk = jobReads;
    expect(afterOk).toBeGreaterThan(before);
    const big = await postGql(app.url, `query($n: Int) { jobs(first: $n) { edges { node { id runs(first: $n) { edges { node { id } } } } } } }`, {
      token: user,
      variables: { n: 100 },
    });
    expect(firstError(big.json).extensions?.limit).toBe("cost");
    expect(jobReads).toBe(afterOk);
  });

  it("still answers queries under every limit, 20 aliases of nextFires(count: 100) included", async () => {
    const r = await postGql(app.url, manyAliases(20, jobId), { token: user });
    expect(r.json.errors).toBeUndefined();
    expect(r.json.data.a19.nextFires).toHaveLength(100);
  });

  it("keeps /healthz answering while an abusive client sends nothing but refused queries", async () => {
    const abusive = [nestedJobsRuns(15), manyAliases(1000, jobId), deepQuery(201, jobId)];
    let stop = false;
    let refused = 0;
    const abuser = async () => {
      for (let i = 0; !stop; i++) {
        const r = await postGql(app.url, abusive[i % abusive.length]!, { token: user });
        if (r.status === 400 && r.json?.errors?.length) refused++;
      }
    };
    const before = jobReads;
    const abusers = Array.from({ length: 4 }, abuser);
    const health: number[] = [];
    for (let i = 0; i < 20; i++) {
      const h = await raw(sibling(app.url, "/healthz"));
      health.push(h.status);
      expect(h.json).toEqual({ status: "ok" });
      await new Promise((r) => setTimeout(r, 25));
    }
    stop = true;
    await Promise.all(abusers);
    expect(health.every((s) => s === 200)).toBe(true);
    expect(refused).toBeGreaterThan(20);
    expect(jobReads).toBe(before);
  });
});

describe("query limits over WebSocket", () => {
  async function wsErrors(query: string, token = user): Promise<Err[]> {
    const client = wsClient(app.wsUrl, token);
    try {
      const { done } = collect(client, query, {}, () => true, 5_000);
      const { events, errors } = await done;
      expect(events).toEqual([]);
      return errors.flatMap((e) => (Array.isArray(e) ? e : [e])) as Err[];
    } finally {
      await client.dispose();
    }
  }

  it("applies the same depth, alias and token limits to operations sent over the socket", async () => {
    const before = jobReads;
    const depth = await wsErrors(nestedJobsRuns(15));
    expect(depth[0]?.extensions).toMatchObject({ code: "GRAPHQL_VALIDATION_FAILED", limit: "maxDepth", max: 10 });
    const aliases = await wsErrors(manyAliases(21, jobId));
    expect(aliases[0]?.extensions).toMatchObject({ limit: "maxAliases" });
    const tokens = await wsErrors(manyAliases(1000, jobId));
    expect(tokens[0]?.extensions?.code).toBe("GRAPHQL_PARSE_FAILED");
    expect(jobReads).toBe(before);
  });

  it("refuses a subscription over the subscription cost maximum and accepts a modest one", async () => {
    const costly = `subscription { runUpdated { id job { runs(first: 100) { edges { node { id job { runs(first: 100) { edges { node { id } } } } } } } } } }`;
    const errs = await wsErrors(costly);
    expect(errs[0]?.extensions).toMatchObject({ code: "GRAPHQL_VALIDATION_FAILED", limit: "cost", max: 1_000 });
    expect(errs[0]?.message).toMatch(/Subscription cost limit of 1000 exceeded, found \d+ \(KAIROS_MAX_SUBSCRIPTION_COST=1000\)/);

    const client = wsClient(app.wsUrl, user);
    try {
      const { done, ready } = collect<{ runUpdated: { id: string } }>(
        client,
        `subscription($id: ID) { runUpdated(jobId: $id) { id status job { name } } }`,
        { id: jobId },
        (ev) => ev.length > 0,
        10_000,
      );
      await ready;
      await gqlOk(app.url, `mutation($id: ID!) { triggerJob(id: $id) { id } }`, { id: jobId }, user);
      const { events, errors } = await done;
      expect(errors).toEqual([]);
      expect(events.length).toBeGreaterThan(0);
    } finally {
      await client.dispose();
    }
  });
});

describe("introspection and field suggestions", () => {
  it("are on in dev", async () => {
    const r = await postGql(app.url, `{ __schema { queryType { name } } }`, { token: user });
    expect(r.json.data.__schema.queryType.name).toBe("Query");
    const typo = await postGql(app.url, `{ jbos { edges { node { id } } } }`, { token: user });
    expect(typo.json.errors[0].message).toMatch(/Did you mean "jobs"/);
  });

  describe("outside dev (KAIROS_INTROSPECTION and KAIROS_FIELD_SUGGESTIONS off)", () => {
    let closed: TestApp;
    let token: string;
    beforeAll(async () => {
      closed = await startTestApp({ env: { KAIROS_INTROSPECTION: "false", KAIROS_FIELD_SUGGESTIONS: "false" } });
      token = await login(closed.url, ADMIN.username, ADMIN.password);
    });
    afterAll(async () => {
      await closed?.dispose();
    });

    it("refuses introspection on HTTP and WebSocket, and hides suggestions on both", async () => {
      for (const q of [`{ __schema { types { name } } }`, `{ __type(name: "Job") { fields { name } } }`]) {
        const r = await postGql(closed.url, q, { token });
        expect(r.status).toBe(400);
        expect(r.json.errors[0].extensions.code).toBe("GRAPHQL_VALIDATION_FAILED");
        expect(r.json.errors[0].message).toMatch(/introspection/i);
      }
      const typo = await postGql(closed.url, `{ jbos { edges { node { id } } } }`, { token });
      expect(typo.json.errors[0].message).toMatch(/Cannot query field "jbos"/);
      expect(typo.text).not.toMatch(/Did you mean/);
      // __typename is not introspection and stays available.
      const typename = await postGql(closed.url, `{ __typename }`, { token });
      expect(typename.json.data).toEqual({ __typename: "Query" });

      const client = wsClient(closed.wsUrl, token);
      try {
        const intro = await collect(client, `{ __schema { types { name } } }`, {}, () => true, 5_000).done;
        const wsTypo = await collect(client, `{ jbos { edges { node { id } } } }`, {}, () => true, 5_000).done;
        const flat = (e: unknown[]) => e.flatMap((x) => (Array.isArray(x) ? x : [x])) as Err[];
        expect(intro.events).toEqual([]);
        expect(flat(intro.errors)[0]?.message).toMatch(/introspection/i);
        expect(flat(wsTypo.errors)[0]?.message).toMatch(/Cannot query field "jbos"/);
        expect(JSON.stringify(wsTypo.errors)).not.toMatch(/Did you mean/);
      } finally {
        await client.dispose();
      }
    });
  });
});
