/**
 * More attacks on DAG workflows by a hostile USER, over the real API, engine and executor
 * (docs/dags.md). Each hole and its fix is in docs/security.md, "DAG workflows".
 */
import type { Collection, Document } from "mongodb";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { code, makeUser } from "../helpers/accounts.js";
import { useTestApp } from "../helpers/app.js";
import { documentsFound } from "../helpers/reads.js";
import { wsClient } from "../helpers/graphql.js";
import { taskRowCursor } from "../../src/resolvers/task-row-pages.js";
import { createDag, finishedDagRun, gql, gqlOk, triggerDag, waitFor } from "../dag/helpers.js";

const t = useTestApp();

let users = 0;
const user = () => makeUser(t.app, t.admin, `dag-attacker2-${Date.now()}-${users++}`);

describe("reading a page of DAG runs", () => {
  it("DagRun.tasks reads the task keys of each DAG run's definition, not its 2 MB of task specs (a page of DAG runs with tasks(first: 1), cost ~400)", async () => {
    const u = await user();
    // 28 tasks of a 64 KiB command each: a 1.8 MB definition (under the 2 MiB request limit). In a
    // pool no executor serves: they need not start before their DAG runs are cancelled.
    const pad = "x".repeat(65_000);
    const tasks = Array.from({ length: 28 }, (_, i) => ({ key: `t${i}`, spec: { kind: "COMMAND", command: `: ${pad}; sleep 30`, timeout: "PT1M", pool: "nowhere" } }));
    const id = (await gqlOk<{ createDag: { id: string } }>(t.app.url, `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`, { input: { name: "fat-definition", tasks } }, u.token)).createDag.id;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        const runId = await triggerDag(t.app.url, u.token, id);
        await gqlOk(t.app.url, `mutation($id: ID!) { cancelDagRun(id: $id) { id } }`, { id: runId }, u.token);
      }),
    );
    const definitions = t.app.services.mongo.c.dagDefinitions as unknown as Collection<Document>;
    const findOne = definitions.findOne.bind(definitions);
    let bytes = 0;
    const spy = vi.spyOn(definitions, "findOne").mockImplementation((async (...args: Parameters<typeof findOne>) => {
      const d = await findOne(...args);
      bytes += JSON.stringify(d ?? null).length;
      return d;
    }) as never);
    let r: Awaited<ReturnType<typeof gql>>;
    try {
      // Before: cost ~400, 76 definitions read (139 MB) with 19 such aliases and 4 DAG runs; 100 DAG runs would be 3.4 GB per
      // request. Since DagRun.tasks is a connection its edges and nodes count too (~600 an alias): 15 aliases, 60 reads.
      const aliases = Array.from({ length: 15 }, (_, i) => `a${i}: dagRuns(first: 100) { edges { node { tasks(first: 1) { edges { node { key } } } } } }`).join(" ");
      r = await gql(t.app.url, `{ ${aliases} }`, {}, u.token);
    } finally {
      spy.mockRestore();
    }
    expect(r.errors).toBeUndefined();
    expect((r.data as Record<string, { edges: Array<{ node: { tasks: { edges: Array<{ node: { key: string } }> } } }> }>).a0!.edges.map((e) => e.node.tasks.edges.map((x) => x.node))).toEqual(
      Array.from({ length: 4 }, () => [{ key: "t0" }]),
    );
    // 60 reads of the 28 task keys: a few KB.
    expect(bytes).toBeLessThan(200_000);
    // One DAG run's rows still read (the typed client's page of 400).
    const one = await gqlOk<{ dagRuns: { edges: Array<{ node: { tasks: { edges: unknown[] } } }> } }>(t.app.url, `{ dagRuns(first: 1) { edges { node { tasks(first: 400) { edges { node { key status } } } } } } }`, {}, u.token);
    expect(one.dagRuns.edges[0]!.node.tasks.edges).toHaveLength(28);
  });
});

describe("a DAG run of 100 tasks, each leaving a 64 KiB result", () => {
  // Made once for the two tests below (101 submissions of its user's 120); at a high load its 100
  // tasks take more than a test's 30 s.
  let u: { token: string };
  let runId: string;
  beforeAll(async () => {
    u = await user();
    const big = `printf '"%s"' "$(head -c 65000 /dev/zero | tr '\\0' x)" > $KAIROS_RESULT`;
    const id = await createDag(t.app.url, u.token, "fat-results", Array.from({ length: 100 }, (_, i) => ({ key: `t${i}`, command: big }))); // 1
    runId = await triggerDag(t.app.url, u.token, id); // 100
    expect((await finishedDagRun(t.app.url, u.token, runId, 120_000)).status).toBe("SUCCEEDED");
  }, 150_000);

  describe("reading a DAG run's tasks", () => {
    it("DagRun.tasks(first: 1) reads the page's task run, not every task run of the DAG run (every attempt) per alias", async () => {
      const { docs } = await documentsFound(t.app.services.mongo.c.runs, async () => {
        // Before: each alias read all 100 task runs' states (2,000 documents; with a 1,000-task DAG
        // run ~0.6 s of the API's CPU for this query of cost ~60, and more with every retryDagRun's attempts).
        // Alias i reads the row after t(i-1): the cursor names a task row (task-row-pages.ts).
        const after = (i: number) => (i === 0 ? "" : `, after: ${JSON.stringify(taskRowCursor({ key: `t${i - 1}`, mapIndex: null }))}`);
        const q = `query($id: ID!) { ${Array.from({ length: 20 }, (_, i) => `a${i}: dagRun(id: $id) { tasks(first: 1${after(i)}) { edges { node { key status run { status } } } } }`).join(" ")} }`;
        const r = await gqlOk<Record<string, { tasks: { edges: Array<{ node: { key: string; status: string; run: { status: string } } }> } }>>(t.app.url, q, { id: runId }, u.token);
        expect(Object.values(r).map((x) => x.tasks.edges.map((e) => e.node))).toEqual(Array.from({ length: 20 }, (_, i) => [{ key: `t${i}`, status: "SUCCEEDED", run: { status: "SUCCEEDED" } }]));
        // This DAG run's task runs only (by its id, or by fire keys, which start with it): the app's
        // background rounds of other DAG runs may read meanwhile (a full-suite run counted 24).
      }, (f) => f.dagRunId === runId || JSON.stringify(f.fireKey ?? null).includes(runId));
      expect(docs).toBe(20);
    });
  });

  describe("task results in one request", () => {
    it("are read up to 32 MiB a request: 20 aliases of tasks(first: 100) { result } of 64 KiB results (cost ~2,000) are refused, not answered with 130 MB", async () => {
      const q = `query($id: ID!) { ${Array.from({ length: 20 }, (_, i) => `a${i}: dagRun(id: $id) { tasks(first: 100) { edges { node { result } } } }`).join(" ")} }`;
      const res = await fetch(t.app.url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${u.token}` }, body: JSON.stringify({ query: q, variables: { id: runId } }) });
      const text = await res.text();
      // Before: 130 MB (with 300 such tasks, cost ~6,000: 390 MB, 14 s of the API's CPU, 1.2 GB more memory).
      expect(text.length).toBeLessThan(36_000_000);
      // The rows past the bound are refused (DagRun.tasks and Query.dagRun are non-null, so the whole answer is).
      const body = JSON.parse(text) as { data: unknown; errors?: Array<{ message: string; path: unknown[]; extensions: { code: string; field: string } }> };
      expect(body.data).toBeNull();
      expect(body.errors?.map((e) => [e.extensions.code, e.extensions.field])).toEqual([["BAD_USER_INPUT", "first"]]);
      expect(body.errors?.[0]?.message).toBe(
        "first: the task rows asked for in this request carry more than 33554432 bytes (32 MiB) of results; ask for fewer rows (first, then after) or fewer DAG runs' tasks in one request",
      );
      // One page of them, as the typed client reads it, is served whole.
      const one = await gqlOk<{ dagRun: { tasks: { edges: Array<{ node: { result: string } }> } } }>(t.app.url, `query($id: ID!) { dagRun(id: $id) { tasks(first: 100) { edges { node { result } } } } }`, { id: runId }, u.token);
      expect(one.dagRun.tasks.edges.map((e) => e.node).every((x) => x.result.length === 65_000)).toBe(true);
    });
  });
});

describe("params in a page", () => {
  it("cost one per KiB they may hold: 20 aliases of dagRuns(first: 100) { params } are refused as too costly, not answered with 130 MB", async () => {
    const u = await user();
    const id = await createDag(t.app.url, u.token, "fat-params", [{ key: "a", command: "true" }], { params: { big: "x".repeat(65_000) } });
    await triggerDag(t.app.url, u.token, id);
    // Before: cost ~4,000; over 118 DAG runs of 64 KiB params (118 submissions) the answer was 130 MB, 3.3 s of the API's CPU, 0.5 GB more memory.
    const many = `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: dagRuns(first: 100) { edges { node { params } } }`).join(" ")} }`;
    const r = await gql(t.app.url, many, {}, u.token);
    expect([code(r), r.errors?.[0]?.extensions?.limit]).toEqual(["GRAPHQL_VALIDATION_FAILED", "cost"]);
    const dags = `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: dags(first: 100) { edges { node { params } } }`).join(" ")} }`;
    expect(code(await gql(t.app.url, dags, {}, u.token))).toBe("GRAPHQL_VALIDATION_FAILED");
    // A page of 100 with their params is read.
    const one = await gqlOk<{ dagRuns: { edges: Array<{ node: { params: { big: string } } }> } }>(t.app.url, `{ dagRuns(first: 100) { edges { node { params } } } }`, {}, u.token);
    expect(one.dagRuns.edges.map((e) => e.node.params.big.length)).toEqual([65_000]);
  });
});

describe("subscriptions", () => {
  it("a user holds at most 20 dagRunUpdated / runUpdated subscriptions at once: each decoded every run event of every user", async () => {
    const victim = await user();
    const mallory = await user();
    const dagId = await createDag(t.app.url, mallory.token, "sub-flood", [{ key: "a", command: "true" }]);
    // A subscription the server holds has subscribed to the run events (runUpdated and dagRunUpdated
    // alike; nothing else subscribes to them meanwhile): counted, with the releases of those it closed.
    const events = t.app.services.events;
    const subscribeEvents = events.subscribe.bind(events);
    let released = 0;
    const opened = vi.spyOn(events, "subscribe").mockImplementation((async (...args: Parameters<typeof subscribeEvents>) => {
      const unsubscribe = await subscribeEvents(...args);
      return async () => {
        released++;
        await unsubscribe();
      };
    }) as never);
    /** Subscribes; settles "ok" once the server holds the stream, "refused" on an error or an end. */
    const subscribe = (client: ReturnType<typeof wsClient>, query: string, variables: Record<string, unknown> = {}) => {
      let refused = false;
      client.subscribe({ query, variables }, { next: (v) => void (v.errors && (refused = true)), error: () => void (refused = true), complete: () => void (refused = true) });
      return { get refused() { return refused; } };
    };
    try {
      const client = wsClient(t.app.wsUrl, mallory.token);
      try {
        // Before: all 60 were held (1,000 of them doubled the CPU a 40-task DAG run of another user took; 1,200 a minute fit the request budget).
        const subs = [
          ...Array.from({ length: 30 }, () => subscribe(client, `subscription($d: ID) { dagRunUpdated(dagId: $d) { dagRunId } }`, { d: dagId })),
          ...Array.from({ length: 30 }, () => subscribe(client, `subscription { runUpdated { id } }`)),
        ];
        // Every one answered: held (subscribed to the events) or refused.
        await waitFor(async () => opened.mock.calls.length + subs.filter((x) => x.refused).length >= 60, 20_000);
        expect([opened.mock.calls.length, subs.filter((x) => x.refused).length]).toEqual([20, 40]);
        // Another user is not limited by them.
        const other = wsClient(t.app.wsUrl, victim.token);
        try {
          const o = subscribe(other, `subscription { dagRunUpdated { dagRunId } }`);
          await waitFor(async () => opened.mock.calls.length > 20 || o.refused, 10_000);
          expect([opened.mock.calls.length, o.refused]).toEqual([21, false]);
        } finally {
          await other.dispose();
        }
        expect(subs.filter((x) => x.refused)).toHaveLength(40);
      } finally {
        await client.dispose();
      }
      // Closed: its slots are free again (the server has released the 20 streams and the other user's).
      await waitFor(async () => released >= 21, 10_000);
      const again = wsClient(t.app.wsUrl, mallory.token);
      try {
        const a = subscribe(again, `subscription { runUpdated { id } }`);
        await waitFor(async () => opened.mock.calls.length > 21 || a.refused, 10_000);
        expect([opened.mock.calls.length, a.refused]).toEqual([22, false]);
      } finally {
        await again.dispose();
      }
    } finally {
      opened.mockRestore();
    }
  });
});

describe("lifecycle races", () => {
  it("a retryDagRun whose DAG is deleted between its check and its write gets a CANCELLED DAG run, not the deleted DAG's tasks run again", async () => {
    const u = await user();
    const id = await createDag(t.app.url, u.token, "deleted-mid-retry", [{ key: "a", command: "exit 1" }, { key: "b", command: "true", dependsOn: ["a"] }]);
    const runId = await triggerDag(t.app.url, u.token, id);
    expect((await finishedDagRun(t.app.url, u.token, runId, 20_000)).status).toBe("FAILED");
    const dagRuns = t.app.services.mongo.c.dagRuns as unknown as Collection<Document>;
    const updateOne = dagRuns.updateOne.bind(dagRuns);
    let armed = true;
    // deleteDag runs to the end after the retry checked the DAG and before it writes its DAG run RUNNING: it finds none to cancel.
    const spy = vi.spyOn(dagRuns, "updateOne").mockImplementation((async (filter: Document, update: Document, options?: Document) => {
      if (armed && filter._id === runId && update.$set?.status === "RUNNING") {
        armed = false;
        await gqlOk(t.app.url, `mutation($id: ID!) { deleteDag(id: $id) }`, { id }, u.token);
      }
      return updateOne(filter, update, options);
    }) as never);
    try {
      await gqlOk(t.app.url, `mutation($id: ID!) { retryDagRun(id: $id) { id } }`, { id: runId }, u.token);
    } finally {
      spy.mockRestore();
    }
    expect(armed).toBe(false);
    const run = await finishedDagRun(t.app.url, u.token, runId, 20_000);
    // Before: the deleted DAG's tasks were queued again (a: attempt 2 ran and FAILED) and the DAG run ended FAILED.
    expect(run.status).toBe("CANCELLED");
    expect(run.tasks.map((x) => [x.key, x.status, x.attempt])).toEqual([
      ["a", "CANCELLED", 2],
      ["b", "CANCELLED", 2],
    ]);
  });
});

describe("crafted requests", () => {
  it("a subscription sent over HTTP is BAD_REQUEST saying to use WebSocket, not INTERNAL_SERVER_ERROR", async () => {
    const u = await user();
    for (const q of [`subscription { dagRunUpdated { dagRunId } }`, `subscription { dagRunUpdated(dagId: "", dagRunId: "") { dagRunId } }`, `subscription { runUpdated { id } }`]) {
      const r = await gql(t.app.url, q, {}, u.token);
      // Before: INTERNAL_SERVER_ERROR, "Cannot return null for non-nullable field Subscription.dagRunUpdated." (logged as unexpected).
      expect([q, r.errors?.[0]?.extensions?.code]).toEqual([q, "BAD_REQUEST"]);
      expect(r.errors?.[0]?.message).toMatch(/^subscriptions are served over WebSocket \(graphql-ws/);
    }
  });
});

describe("updateDag", () => {
  it("with tasks takes one submission, as createDag: a loop of new definitions is RATE_LIMITED at the submission budget, not the request budget", async () => {
    const u = await user();
    const tasks = [{ key: "a", spec: { kind: "COMMAND", command: "true" } }];
    const id = (await gqlOk<{ createDag: { id: string } }>(t.app.url, `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`, { input: { name: "redefined", tasks } }, u.token)).createDag.id; // 1
    const q = `mutation($id: ID!, $input: UpdateDagInput!) { updateDag(id: $id, input: $input) { version } }`;
    // Each update of a 1,000-task, 20,000-edge definition (1.7 MB) took ~0.2 s of the API's CPU;
    // charged one request of 1,200 a minute, one user kept several cores busy.
    let made = 0;
    let refused: Awaited<ReturnType<typeof gql>> | null = null;
    for (let i = 0; i < 130 && !refused; i++) {
      const r = await gql(t.app.url, q, { id, input: { tasks } }, u.token);
      if (r.errors) refused = r;
      else made++;
    }
    expect(made).toBe(119);
    expect([code(refused!), refused!.errors?.[0]?.extensions?.limit]).toEqual(["RATE_LIMITED", "submissions"]);
    // What does not change the definition is charged nothing more than a request.
    for (let i = 0; i < 5; i++) expect((await gql(t.app.url, q, { id, input: { description: `d${i}` } }, u.token)).errors).toBeUndefined();
  });
});

describe("retryDagRun of a mapped task", () => {
  it("takes one submission per instance it re-runs: a cancel-and-retry loop of a 50-wide fan-out is refused like a loop of its triggers", async () => {
    const u = await user();
    const list = `printf '[%s]' "$(seq -s, 1 50)" > $KAIROS_RESULT`;
    const id = await createDag(t.app.url, u.token, "mapped-retry-loop", [
      { key: "list", command: list },
      { key: "each", command: "sleep 30", dependsOn: ["list"], mapOver: "list" },
    ]); // 1
    const runId = await triggerDag(t.app.url, u.token, id); // 2, then 49 charged as "each" expands
    let retried = 0;
    let refused: Awaited<ReturnType<typeof gql>> | null = null;
    for (let cycle = 0; cycle < 3 && !refused; cycle++) {
      // Wait until the fan-out's instances exist, then cancel the DAG run.
      await waitFor(async () => {
        const r = await gqlOk<{ dagRun: { tasks: { edges: Array<{ node: { key: string; mapIndex: number | null; status: string } }> } } }>(
          t.app.url,
          `query($id: ID!) { dagRun(id: $id) { tasks(first: 100) { edges { node { key mapIndex status } } } } }`,
          { id: runId },
          u.token,
        );
        return r.dagRun.tasks.edges.map((e) => e.node).filter((x) => x.key === "each" && x.mapIndex !== null && ["QUEUED", "RUNNING"].includes(x.status)).length === 50;
      }, 30_000, 100);
      await gqlOk(t.app.url, `mutation($id: ID!) { cancelDagRun(id: $id) { id } }`, { id: runId }, u.token);
      expect((await finishedDagRun(t.app.url, u.token, runId, 30_000)).status).toBe("CANCELLED");
      const r = await gql(t.app.url, `mutation($id: ID!) { retryDagRun(id: $id) { id } }`, { id: runId }, u.token);
      if (r.errors) refused = r;
      else retried++;
    }
    // Before: charged one submission per retry (a mapped task counted once) for 50 task runs each: 3 retries, 150 runs, for 3 submissions.
    expect(retried).toBe(1);
    expect([code(refused!), refused!.errors?.[0]?.extensions?.limit]).toEqual(["RATE_LIMITED", "submissions"]);
    await gql(t.app.url, `mutation($id: ID!) { cancelDagRun(id: $id) { id } }`, { id: runId }, u.token);
  });
});

describe("pauseDag racing updateDag", () => {
  it("a pauseDag landing while updateDag gives the DAG its first schedule leaves the schedule paused, not firing under a DAG shown paused", async () => {
    const u = await user();
    const id = await createDag(t.app.url, u.token, "paused-mid-schedule", [{ key: "a", command: "true" }]);
    const jobs = t.app.services.mongo.c.jobs as unknown as Collection<Document>;
    const insertOne = jobs.insertOne.bind(jobs);
    let armed = true;
    // pauseDag runs to the end after updateDag read the DAG (unpaused) and before it inserts the timer job: it finds no timer to pause.
    const spy = vi.spyOn(jobs, "insertOne").mockImplementation((async (doc: Document, options?: Document) => {
      if (armed && doc.dagId === id) {
        armed = false;
        await gqlOk(t.app.url, `mutation($id: ID!) { pauseDag(id: $id) { paused } }`, { id }, u.token);
      }
      return insertOne(doc, options);
    }) as never);
    try {
      await gqlOk(t.app.url, `mutation($id: ID!) { updateDag(id: $id, input: { schedule: { kind: CRON, cron: "* * * * * *" } }) { id } }`, { id }, u.token);
    } finally {
      spy.mockRestore();
    }
    expect(armed).toBe(false);
    const dag = await gqlOk<{ dag: { paused: boolean; nextFireAt: string | null } }>(t.app.url, `query($id: ID!) { dag(id: $id) { paused nextFireAt } }`, { id }, u.token);
    // Before: paused true, and the timer armed (nextFireAt set): a DAG run every second, run to its end.
    expect(dag.dag).toEqual({ paused: true, nextFireAt: null });
    await new Promise((r) => setTimeout(r, 2_500));
    const runs = await gqlOk<{ dagRuns: { edges: Array<{ node: { status: string; tasks: { edges: Array<{ node: { run: { startedAt: string | null } | null } }> } } }> } }>(
      t.app.url,
      `query($id: ID!) { dagRuns(dagId: $id, first: 100) { edges { node { status tasks(first: 1) { edges { node { run { startedAt } } } } } } } }`,
      { id },
      u.token,
    );
    // Staged ahead in the instant the timer was unpaused, then taken back by its pause: none started.
    expect(runs.dagRuns.edges.filter((e) => e.node.status !== "CANCELLED" || e.node.tasks.edges.some((x) => x.node.run?.startedAt))).toEqual([]);
    await gqlOk(t.app.url, `mutation($id: ID!) { deleteDag(id: $id) }`, { id }, u.token);
  });
});
