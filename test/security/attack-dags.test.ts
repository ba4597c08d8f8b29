/**
 * Attacks on DAG workflows by a hostile USER, over the real API, engine and executor (docs/dags.md).
 * Only attacks that found a hole, or that pin a property no other test asserts; each hole and its
 * fix is in docs/security.md, "DAG workflows".
 */
import type { Collection, Document } from "mongodb";
import { describe, expect, it, vi } from "vitest";
import { code, makeUser, message } from "../helpers/accounts.js";
import { useTestApp } from "../helpers/app.js";
import { documentsFound } from "../helpers/reads.js";
import { collect, wsClient } from "../helpers/graphql.js";
import { checkResult, DagTaskIo, MAX_INPUTS_BYTES } from "../../src/dag/index.js";
import { createDag, finishedDagRun, gql, gqlOk, tasksInput, triggerDag, waitFor } from "../dag/helpers.js";

const t = useTestApp();

let users = 0;
const user = () => makeUser(t.app, t.admin, `dag-attacker-${Date.now()}-${users++}`);

/** Bytes of the `runs` documents the server reads while `fn` runs (every find on the collection). */
const runBytesRead = async (fn: () => Promise<unknown>): Promise<number> => (await documentsFound(t.app.services.mongo.c.runs, fn)).bytes;

describe("another user's DAGs and DAG runs", () => {
  it("are NOT_FOUND for every query, mutation and subscription, and their events never reach the attacker", async () => {
    const victim = await user();
    const mallory = await user();
    const dagId = await createDag(t.app.url, victim.token, "victim-dag", [{ key: "a", command: "echo secret-output > $KAIROS_RESULT; echo '\"victim-result\"' > $KAIROS_RESULT" }], {
      schedule: { kind: "CRON", cron: "0 0 1 1 *" },
    });
    const runId = await triggerDag(t.app.url, victim.token, dagId);
    const taskRunId = (await finishedDagRun(t.app.url, victim.token, runId)).tasks[0]!.run!.id;

    for (const [q, v] of [
      [`query($id: ID!) { dag(id: $id) { id } }`, { id: dagId }],
      [`query($id: ID!) { dagRun(id: $id) { id } }`, { id: runId }],
      [`query($id: ID!) { dagRuns(dagId: $id) { edges { node { id } } } }`, { id: dagId }],
      [`mutation($id: ID!) { updateDag(id: $id, input: { description: "pwned" }) { id } }`, { id: dagId }],
      [`mutation($id: ID!) { pauseDag(id: $id) { id } }`, { id: dagId }],
      [`mutation($id: ID!) { resumeDag(id: $id) { id } }`, { id: dagId }],
      [`mutation($id: ID!) { triggerDag(id: $id, idempotencyKey: "k1") { id } }`, { id: dagId }],
      [`mutation($id: ID!) { backfillDag(id: $id, from: "2020-01-01T00:00:00Z", to: "2021-01-02T00:00:00Z") { id } }`, { id: dagId }],
      [`mutation($id: ID!) { retryDagRun(id: $id) { id } }`, { id: runId }],
      [`mutation($id: ID!) { cancelDagRun(id: $id) { id } }`, { id: runId }],
      [`mutation($id: ID!) { deleteDag(id: $id) }`, { id: dagId }],
      // A task's run is a run: the run API's ownership holds for it too, and the DAG id names no job of hers.
      [`query($id: ID!) { run(id: $id) { id } }`, { id: taskRunId }],
      [`query($id: ID!) { run(id: $id) { logs { data } } }`, { id: taskRunId }],
      [`mutation($id: ID!) { retryRun(id: $id) { id } }`, { id: taskRunId }],
      [`mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: taskRunId }],
      [`query($id: ID!) { runs(jobId: $id) { edges { node { id } } } }`, { id: dagId }],
    ] as const) {
      const r = await gql(t.app.url, q, v, mallory.token);
      expect([q, code(r), JSON.stringify(r)]).toEqual([q, "NOT_FOUND", expect.not.stringContaining("victim")]);
    }

    const client = wsClient(t.app.wsUrl, mallory.token);
    try {
      for (const v of [{ dagId }, { dagRunId: runId }]) {
        const sub = collect<unknown>(client, `subscription($dagId: ID, $dagRunId: ID) { dagRunUpdated(dagId: $dagId, dagRunId: $dagRunId) { dagRunId } }`, v, () => true, 5_000);
        const { events, errors } = await sub.done;
        expect(events).toEqual([]);
        expect(JSON.stringify(errors)).toContain("NOT_FOUND");
      }
      // Subscribed to everything of hers: the victim's DAG run's events are not hers. Read until the
      // victim's own subscription has had the DAG run's end, the last of its events (not a fixed 3 s).
      const leaked: unknown[] = [];
      // Both streams are open once the server has subscribed them to the run events.
      const opened = vi.spyOn(t.app.services.events, "subscribe");
      const stop = client.subscribe({ query: `subscription { dagRunUpdated { dagRunId task { key } } }` }, { next: (v) => void leaked.push(v), error: (e) => void leaked.push(e), complete: () => undefined });
      const own = wsClient(t.app.wsUrl, victim.token);
      try {
        const seen = collect<{ dagRunUpdated: { status: string; task: unknown } }>(
          own,
          `subscription($d: ID) { dagRunUpdated(dagId: $d) { dagRunId status task { key } } }`,
          { d: dagId },
          (events) => events.some((e) => e.dagRunUpdated.task === null && e.dagRunUpdated.status === "SUCCEEDED"),
          30_000,
        );
        try {
          await waitFor(async () => opened.mock.calls.length >= 2, 10_000);
        } finally {
          opened.mockRestore();
        }
        const again = await triggerDag(t.app.url, victim.token, dagId);
        await finishedDagRun(t.app.url, victim.token, again);
        const { events } = await seen.done;
        expect(events.at(-1)?.dagRunUpdated).toMatchObject({ status: "SUCCEEDED", task: null });
        stop();
      } finally {
        await own.dispose();
      }
      expect(leaked).toEqual([]);
    } finally {
      await client.dispose();
    }
    // Nothing of the above changed the victim's DAG.
    const dag = await gqlOk<{ dag: { description: string | null; paused: boolean } }>(t.app.url, `query($id: ID!) { dag(id: $id) { description paused } }`, { id: dagId }, victim.token);
    expect(dag.dag).toEqual({ description: null, paused: false });
  });
});

describe("reading a DAG run", () => {
  it("DagRun.tasks(first: 1) reads one task's run, not every run of the DAG run with its 64 KiB result", async () => {
    const u = await user();
    // Ten tasks, each leaving a ~50 KB result.
    const big = `printf '"%s"' "$(head -c 50000 /dev/zero | tr '\\0' x)" > $KAIROS_RESULT`;
    const id = await createDag(t.app.url, u.token, "heavy-results", Array.from({ length: 10 }, (_, i) => ({ key: `t${i}`, command: big })));
    const runId = await triggerDag(t.app.url, u.token, id);
    const done = await finishedDagRun(t.app.url, u.token, runId);
    expect(done.status).toBe("SUCCEEDED");
    const bytes = await runBytesRead(() => gqlOk(t.app.url, `query($id: ID!) { dagRun(id: $id) { tasks(first: 1) { edges { node { key status } } } } }`, { id: runId }, u.token));
    // Before: every task run whole (10 × 50 KB) for a query that costs 4.
    expect(bytes).toBeLessThan(60_000);
  });
});

describe("query cost of DAG-sized fields", () => {
  it("charges a DAG's tasks, order and graph as a DAG of 1000 tasks: a page of graphs or task lists is refused, one DAG's reads pass", async () => {
    const u = await user();
    const id = await createDag(t.app.url, u.token, "costed-graph", [{ key: "a", command: "true" }, { key: "b", command: "true", dependsOn: ["a"] }]);
    for (const q of [
      `{ dags(first: 20) { edges { node { graph(format: DOT) } } } }`,
      `{ dags(first: 20) { edges { node { tasks { key dependsOn spec { command } } } } } }`,
      `{ dags(first: 20) { edges { node { topologicalOrder } } } }`,
      `{ dagRuns(first: 100) { edges { node { graph } } } }`,
    ]) {
      const r = await gql(t.app.url, q, {}, u.token);
      expect([q, code(r), r.errors?.[0]?.extensions?.limit]).toEqual([q, "GRAPHQL_VALIDATION_FAILED", "cost"]);
    }
    const many = Array.from({ length: 12 }, (_, i) => `g${i}: graph`).join(" ");
    expect(code(await gql(t.app.url, `query($id: ID!) { dag(id: $id) { ${many} } }`, { id }, u.token))).toBe("GRAPHQL_VALIDATION_FAILED");
    // The typed client's reads of one DAG pass.
    const one = await gqlOk<{ dag: { graph: string; topologicalOrder: string[]; tasks: unknown[] } }>(
      t.app.url,
      `query($id: ID!) { dag(id: $id) { graph topologicalOrder tasks { key dependsOn trigger priority mapOver spec { kind command argv timeout pool } } } }`,
      { id },
      u.token,
    );
    expect(one.dag.topologicalOrder).toEqual(["a", "b"]);
  });
});

describe("backfillDag", () => {
  it("makes at most 1000 task runs per call (slots × tasks), refusing a wider range with what is allowed", async () => {
    const u = await user();
    // A chain of 20 tasks on an every-minute schedule; 100 past minutes would be 2,000 task runs.
    const chain = Array.from({ length: 20 }, (_, i) => ({ key: `s${i}`, command: "true", ...(i > 0 ? { dependsOn: [`s${i - 1}`] } : {}) }));
    const id = await createDag(t.app.url, u.token, "backfill-amplifier", chain, {
      schedule: { kind: "CRON", cron: "* * * * *", startAt: new Date(Date.now() - 3 * 3600_000).toISOString() },
      paused: true,
    });
    const to = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 60_000);
    const from = new Date(to.getTime() - 99 * 60_000);
    const q = `mutation($id: ID!, $from: DateTime!, $to: DateTime!) { backfillDag(id: $id, from: $from, to: $to) { id } }`;
    const r = await gql(t.app.url, q, { id, from: from.toISOString(), to: to.toISOString() }, u.token);
    expect(code(r)).toBe("BAD_USER_INPUT");
    expect(r.errors?.[0]?.extensions?.field).toBe("from");
    expect(message(r)).toBe(
      "from: the range holds 100 slots, and each is a DAG run of 20 tasks; a backfill makes at most 1000 task runs, so at most 50 slots of this DAG at a time: narrow the range",
    );
    const made = await gqlOk<{ dagRuns: { edges: unknown[] } }>(t.app.url, `query($id: ID!) { dagRuns(dagId: $id) { edges { node { id } } } }`, { id }, u.token);
    expect(made.dagRuns.edges).toEqual([]);
    // Within the bound it works.
    const ok = await gqlOk<{ backfillDag: unknown[] }>(t.app.url, q, { id, from: new Date(to.getTime() - 60_000).toISOString(), to: to.toISOString() }, u.token);
    expect(ok.backfillDag).toHaveLength(2);
  });

  it("takes one submission per task run it makes: a loop of backfills is refused after 120 task runs' worth, like 120 triggerJob calls", async () => {
    const u = await user();
    const chain = Array.from({ length: 20 }, (_, i) => ({ key: `s${i}`, command: "true", ...(i > 0 ? { dependsOn: [`s${i - 1}`] } : {}) }));
    const id = await createDag(t.app.url, u.token, "backfill-loop", chain, { schedule: { kind: "CRON", cron: "* * * * *", startAt: new Date(Date.now() - 3 * 3600_000).toISOString() }, paused: true }); // 1
    const q = `mutation($id: ID!, $from: DateTime!, $to: DateTime!) { backfillDag(id: $id, from: $from, to: $to) { id } }`;
    const minute = (back: number) => new Date((Math.floor(Date.now() / 60_000) - back) * 60_000).toISOString();
    // 5 slots × 20 tasks = 100 submissions: made. Before: one submission per call, 120 calls (120,000 task runs) a minute.
    expect((await gqlOk<{ backfillDag: unknown[] }>(t.app.url, q, { id, from: minute(10), to: minute(6) }, u.token)).backfillDag).toHaveLength(5);
    const again = await gql(t.app.url, q, { id, from: minute(30), to: minute(29) }, u.token); // 40 more: over 120
    expect(code(again)).toBe("RATE_LIMITED");
    expect(message(again)).toMatch(/^too many submissions for user dag-attacker-\S+: at most 120 per PT1M; a backfill counts one per task of each slot's DAG run \(2 slots × 20 tasks\); retry in \d+ s$/);
    const made = await gqlOk<{ dagRuns: { edges: unknown[] } }>(t.app.url, `query($id: ID!) { dagRuns(dagId: $id, first: 100) { edges { node { id } } } }`, { id }, u.token);
    expect(made.dagRuns.edges).toHaveLength(5);
  });

  it("counts a mapped task as the 1,000 instances it may make: one slot at a time (333 DAG runs of 1,000 instances each before)", async () => {
    const u = await user();
    const id = await createDag(
      t.app.url,
      u.token,
      "backfill-mapped",
      [
        { key: "list", command: "printf '[1,2]' > $KAIROS_RESULT" },
        { key: "each", command: "true", dependsOn: ["list"], mapOver: "list" },
        { key: "sum", command: "true", dependsOn: ["each"] },
      ],
      { schedule: { kind: "CRON", cron: "* * * * *", startAt: new Date(Date.now() - 3 * 3600_000).toISOString() }, paused: true },
    );
    const q = `mutation($id: ID!, $from: DateTime!, $to: DateTime!) { backfillDag(id: $id, from: $from, to: $to) { id } }`;
    const to = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 60_000);
    const r = await gql(t.app.url, q, { id, from: new Date(to.getTime() - 60_000).toISOString(), to: to.toISOString() }, u.token);
    expect(code(r)).toBe("BAD_USER_INPUT");
    expect(message(r)).toBe(
      "from: the range holds 2 slots, and each is a DAG run of up to 1002 task runs (3 tasks, 1 of them mapped over up to 1000 elements each); a backfill makes at most 1000 task runs, so at most 1 slot of this DAG at a time: narrow the range",
    );
    const one = await gqlOk<{ backfillDag: Array<{ id: string }> }>(t.app.url, q, { id, from: to.toISOString(), to: to.toISOString() }, u.token);
    expect(one.backfillDag).toHaveLength(1);
    expect((await finishedDagRun(t.app.url, u.token, one.backfillDag[0]!.id)).status).toBe("SUCCEEDED");
  });
});

describe("the submission budget counts the runs a call makes", () => {
  it("retryRun takes one submission, as triggerJob: a loop of retries is refused after 120 (it was bounded by the request rate alone)", async () => {
    const u = await user();
    const { createJob } = await gqlOk<{ createJob: { id: string } }>(t.app.url, `mutation { createJob(input: {name: "fails", schedule: {kind: ONCE}, spec: {command: "exit 3"}}) { id } }`, {}, u.token); // 1
    const run = await waitFor(async () => (await t.app.services.mongo.c.runs.findOne({ jobId: createJob.id, status: "FAILED" }))?._id, 30_000);
    const q = `mutation($id: ID!) { retryRun(id: $id) { id } }`;
    // Six rounds of 20 calls at once (one after another, they took 7-24 s of request round trips).
    const codes: Array<string | undefined> = [];
    for (let round = 0; round < 6; round++) {
      codes.push(...(await Promise.all(Array.from({ length: 20 }, async () => code(await gql(t.app.url, q, { id: run }, u.token))))));
    }
    // 119 within the budget (made, or FAILED_PRECONDITION while the retried run is not over), then refused:
    // none of the first five rounds' 100, one of the last round's 20.
    expect(codes.slice(0, 100).filter((c) => c === "RATE_LIMITED")).toEqual([]);
    expect(codes.slice(100).filter((c) => c === "RATE_LIMITED")).toEqual(["RATE_LIMITED"]);
  });


  it("backfillJob takes one submission per slot: after a backfill of 110 slots another of 10 is refused (it was one submission for up to 1,000 runs)", async () => {
    const u = await user();
    const { createJob } = await gqlOk<{ createJob: { id: string } }>(
      t.app.url,
      `mutation { createJob(input: {name: "every-minute", schedule: {kind: CRON, cron: "* * * * *", startAt: "2020-01-01T00:00:00Z"}, spec: {command: "true"}}) { id } }`,
      {},
      u.token,
    ); // 1
    const q = `mutation($id: ID!) { backfillJob(id: $id, from: "2020-01-01T00:00:00Z", to: "2020-01-01T01:49:00Z") { requested } }`;
    expect((await gqlOk<{ backfillJob: { requested: number } }>(t.app.url, q, { id: createJob.id }, u.token)).backfillJob.requested).toBe(110); // 111 of 120
    const again = await gql(t.app.url, `mutation($id: ID!) { backfillJob(id: $id, from: "2021-01-01T00:00:00Z", to: "2021-01-01T00:09:00Z") { requested } }`, { id: createJob.id }, u.token);
    expect(code(again)).toBe("RATE_LIMITED");
    expect(message(again)).toMatch(/; a backfill counts one per slot \(this range holds 10\); retry in \d+ s$/);
    // (Its schedule may fire once meanwhile, a run of trigger SCHEDULE.)
    expect(await t.app.services.mongo.c.runs.countDocuments({ jobId: createJob.id, trigger: "BACKFILL" })).toBe(110);
  });


  it("charges a mapped task's instances as they are made: a loop of triggers of a 200-wide fan-out is refused after one, not after 40", async () => {
    const u = await user();
    const list = JSON.stringify(Array.from({ length: 200 }, (_, i) => i));
    const id = await createDag(t.app.url, u.token, "fan-loop", [
      { key: "list", command: `printf '%s' '${list}' > $KAIROS_RESULT` },
      { key: "each", command: "true", dependsOn: ["list"], mapOver: "list" },
    ]); // 1
    const first = await triggerDag(t.app.url, u.token, id); // 2: one per task
    // Its fan-out is made: 199 more task runs charged (the mapped task counted one already).
    await waitFor(async () => {
      const r = await gqlOk<{ dagRun: { tasks: { edges: Array<{ node: { key: string; mapIndex: number | null } }> } } }>(
        t.app.url,
        `query($id: ID!) { dagRun(id: $id) { tasks(first: 1000) { edges { node { key mapIndex } } } } }`,
        { id: first },
        u.token,
      );
      return r.dagRun.tasks.edges.map((e) => e.node).filter((x) => x.key === "each" && x.mapIndex !== null).length === 200;
    }, 30_000);
    // Before: 3 submissions spent of 120, and 39 more such triggers (7,800 task runs) a minute.
    const second = await gql(t.app.url, `mutation($id: ID!) { triggerDag(id: $id) { id } }`, { id }, u.token);
    expect(code(second)).toBe("RATE_LIMITED");
    expect(second.errors?.[0]?.extensions?.limit).toBe("submissions");
    expect((await finishedDagRun(t.app.url, u.token, first, 60_000)).status).toBe("SUCCEEDED");
  }, 90_000); // its 200 instances run one by one on 4 slots: over 30 s at a load of 20
});

describe("idempotency keys", () => {
  it("a triggerDag repeated with a key but other params (a null that overrides a default) is FAILED_PRECONDITION, not the first DAG run", async () => {
    const u = await user();
    const id = await createDag(t.app.url, u.token, "idem-params", [{ key: "a", command: "cat $KAIROS_PARAMS > $KAIROS_RESULT" }], { params: { day: "2026-01-01" } });
    const q = `mutation($id: ID!, $params: JSONObject) { triggerDag(id: $id, params: $params, idempotencyKey: "same-key") { id params } }`;
    const first = await gqlOk<{ triggerDag: { id: string; params: unknown } }>(t.app.url, q, { id, params: { day: null } }, u.token);
    expect(first.triggerDag.params).toEqual({ day: null });
    const again = await gqlOk<{ triggerDag: { id: string } }>(t.app.url, q, { id, params: { day: null } }, u.token);
    expect(again.triggerDag.id).toBe(first.triggerDag.id);
    // Before: the fingerprint dropped nulls, so {} (the default day) got the first DAG run back.
    const other = await gql(t.app.url, q, { id, params: {} }, u.token);
    expect(code(other)).toBe("FAILED_PRECONDITION");
    await finishedDagRun(t.app.url, u.token, first.triggerDag.id);
  });
});

describe("task keys", () => {
  it("keys that are names every JavaScript object has (constructor, toString, hasOwnProperty, valueOf) run like any other", async () => {
    const u = await user();
    // Before: initialStates' `tasks[key] ??= …` found Object.prototype's "constructor" and left the
    // task out, so nothing started and the DAG run stayed RUNNING for ever (swept every 5 s).
    const id = await createDag(t.app.url, u.token, "prototype-keys", [
      { key: "constructor", command: "echo '[1,2]' > $KAIROS_RESULT" },
      { key: "toString", command: "cat $KAIROS_INPUTS > $KAIROS_RESULT", dependsOn: ["constructor"], mapOver: "constructor" },
      { key: "valueOf", command: "true" },
      { key: "hasOwnProperty", command: "cat $KAIROS_INPUTS > $KAIROS_RESULT", dependsOn: ["toString", "valueOf"] },
    ]);
    const run = await finishedDagRun(t.app.url, u.token, await triggerDag(t.app.url, u.token, id), 30_000);
    expect(run.status).toBe("SUCCEEDED");
    expect(run.tasks.map((x) => [x.key, x.mapIndex, x.status])).toEqual([
      ["constructor", null, "SUCCEEDED"],
      ["toString", null, "SUCCEEDED"],
      ["toString", 0, "SUCCEEDED"],
      ["toString", 1, "SUCCEEDED"],
      ["valueOf", null, "SUCCEEDED"],
      ["hasOwnProperty", null, "SUCCEEDED"],
    ]);
    expect(run.tasks.at(-1)!.result).toEqual({
      toString: [
        { constructor: [1, 2], item: 1, index: 0 },
        { constructor: [1, 2], item: 2, index: 1 },
      ],
      valueOf: null,
    });
  });

  it("a mapped task's parent named item or index is refused (it would be overwritten by the instance's own item/index)", async () => {
    const u = await user();
    const r = await gql(
      t.app.url,
      `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`,
      { input: { name: "item-collision", tasks: tasksInput([{ key: "item", command: "true" }, { key: "src", command: "true" }, { key: "m", command: "true", dependsOn: ["src", "item"], mapOver: "src" }]) } },
      u.token,
    );
    expect(code(r)).toBe("BAD_USER_INPUT");
    expect(r.errors?.[0]?.extensions?.field).toBe("tasks[2].dependsOn[1]");
    expect(message(r)).toContain('a mapped task\'s parents cannot be named "item" or "index"');
  });
});

describe("deeply nested JSON", () => {
  /** A request whose variables are sent as written (JSON.stringify here would overflow the stack too). */
  async function raw(query: string, variables: string, token: string): Promise<{ errors?: Array<{ message: string; extensions?: Record<string, unknown> }> }> {
    const res = await fetch(t.app.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: `{"query":${JSON.stringify(query)},"variables":${variables}}`,
    });
    return (await res.json()) as { errors?: Array<{ message: string; extensions?: Record<string, unknown> }> };
  }
  const nested = (n: number) => '{"a":'.repeat(n) + "1" + "}".repeat(n);

  it("params nested 6,000 levels deep are BAD_USER_INPUT on params, not an internal error (createDag, updateDag, triggerDag with and without a key)", async () => {
    const u = await user();
    const id = await createDag(t.app.url, u.token, "deep-params", [{ key: "a", command: "true" }]);
    const task = `[{"key":"a","spec":{"kind":"COMMAND","command":"true"}}]`;
    for (const [q, vars, field] of [
      [`mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`, `{"input":{"name":"deep","params":${nested(6000)},"tasks":${task}}}`, "params"],
      [`mutation($input: CreateDagInput!) { createDag(input: $input, idempotencyKey: "deep-c") { id } }`, `{"input":{"name":"deep","params":${nested(6000)},"tasks":${task}}}`, "params"],
      [`mutation($id: ID!, $input: UpdateDagInput!) { updateDag(id: $id, input: $input) { id } }`, `{"id":"${id}","input":{"params":${nested(6000)}}}`, "params"],
      [`mutation($id: ID!, $p: JSONObject) { triggerDag(id: $id, params: $p) { id } }`, `{"id":"${id}","p":${nested(6000)}}`, "params"],
      [`mutation($id: ID!, $p: JSONObject) { triggerDag(id: $id, params: $p, idempotencyKey: "deep-t") { id } }`, `{"id":"${id}","p":${nested(3000)}}`, "params"],
    ] as const) {
      const r = await raw(q, vars, u.token);
      expect([q, r.errors?.[0]?.extensions?.code, r.errors?.[0]?.extensions?.field, r.errors?.[0]?.message]).toEqual([
        q,
        "BAD_USER_INPUT",
        field,
        "params: nests objects and arrays more than 100 levels deep; at most 100",
      ]);
    }
    // 100 levels are fine.
    expect((await raw(`mutation($id: ID!, $p: JSONObject) { triggerDag(id: $id, params: $p) { id } }`, `{"id":"${id}","p":${nested(99)}}`, u.token)).errors).toBeUndefined();
  });

  it("a result nested past 100 levels fails its attempt with RESULT_TOO_DEEP (it was stored, or refused as 'not JSON')", () => {
    const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
    expect(checkResult(deep(100), 200)).toEqual({ json: deep(100) });
    expect(checkResult(deep(101), 202)).toEqual({ error: "RESULT_TOO_DEEP: KAIROS_RESULT nests objects and arrays 101 levels deep; at most 100" });
    expect(checkResult(deep(20_000), 40_000)).toEqual({ error: "RESULT_TOO_DEEP: KAIROS_RESULT nests objects and arrays 20000 levels deep; at most 100" });
    // Brackets inside strings are text, not nesting.
    const text = JSON.stringify(["[[[[".repeat(50), '\\"{{{'.repeat(40)]);
    expect(checkResult(text, text.length)).toEqual({ json: text });
  });
});

describe("lifecycle races", () => {
  it("a triggerDag whose DAG is deleted between reading it and making the run gets a CANCELLED DAG run, not one running for a deleted DAG", async () => {
    const u = await user();
    const id = await createDag(t.app.url, u.token, "deleted-mid-trigger", [{ key: "a", command: "sleep 2" }, { key: "b", command: "true", dependsOn: ["a"] }]);
    const dagRuns = t.app.services.mongo.c.dagRuns as unknown as Collection<Document>;
    const insertOne = dagRuns.insertOne.bind(dagRuns);
    let armed = true;
    // deleteDag runs to the end after the trigger read the DAG and before it inserts its DAG run: it finds none to cancel.
    const spy = vi.spyOn(dagRuns, "insertOne").mockImplementation((async (doc: Document, options?: Document) => {
      if (armed && doc.dagId === id) {
        armed = false;
        await gqlOk(t.app.url, `mutation($id: ID!) { deleteDag(id: $id) }`, { id }, u.token);
      }
      return insertOne(doc, options);
    }) as never);
    let runId: string;
    try {
      runId = await triggerDag(t.app.url, u.token, id);
    } finally {
      spy.mockRestore();
    }
    const run = await finishedDagRun(t.app.url, u.token, runId, 20_000);
    expect(run.status).toBe("CANCELLED");
    expect(run.tasks.map((x) => x.status)).toEqual(["CANCELLED", "CANCELLED"]);
  });

  it("a scheduled fire whose DAG is deleted between reading it and making the run gets a CANCELLED DAG run", async () => {
    const u = await user();
    const id = await createDag(t.app.url, u.token, "deleted-mid-fire", [{ key: "a", command: "sleep 2" }], { schedule: { kind: "CRON", cron: "* * * * * *" } });
    const dagRuns = t.app.services.mongo.c.dagRuns as unknown as Collection<Document>;
    const insertOne = dagRuns.insertOne.bind(dagRuns);
    let fired: string | null = null;
    const spy = vi.spyOn(dagRuns, "insertOne").mockImplementation((async (doc: Document, options?: Document) => {
      if (fired === null && doc.dagId === id && doc.trigger !== "MANUAL") {
        fired = String(doc.fireKey);
        await gqlOk(t.app.url, `mutation($id: ID!) { deleteDag(id: $id) }`, { id }, u.token);
      }
      return insertOne(doc, options);
    }) as never);
    try {
      await waitFor(async () => fired, 10_000);
    } finally {
      spy.mockRestore();
    }
    // The slot's DAG run (a replay of the fire may have made it first, under its own id).
    const made = await waitFor(() => dagRuns.findOne({ fireKey: fired }), 10_000);
    const run = await finishedDagRun(t.app.url, u.token, String(made._id), 20_000);
    // Before: SUCCEEDED, a DAG run of a deleted DAG run to its end.
    expect(run.status).toBe("CANCELLED");
  });

  it("retryDagRun of a deleted DAG's run is FAILED_PRECONDITION: deleteDag's cancelled runs stay readable, they do not come back", async () => {
    const u = await user();
    const id = await createDag(t.app.url, u.token, "deleted-then-retried", [{ key: "a", command: "sleep 30" }]);
    const runId = await triggerDag(t.app.url, u.token, id);
    await gqlOk(t.app.url, `mutation($id: ID!) { deleteDag(id: $id) }`, { id }, u.token);
    expect((await finishedDagRun(t.app.url, u.token, runId, 20_000)).status).toBe("CANCELLED");
    const r = await gql(t.app.url, `mutation($id: ID!) { retryDagRun(id: $id) { id status } }`, { id: runId }, u.token);
    expect(code(r)).toBe("FAILED_PRECONDITION");
    expect(message(r)).toBe(`DAG ${id} of DAG run ${runId} was deleted; its DAG runs can be read but not retried`);
    expect((await finishedDagRun(t.app.url, u.token, runId)).status).toBe("CANCELLED");
  });
});

describe("trigger storms", () => {
  it("triggerDag takes one submission per task: a loop of triggers of a 50-task DAG is refused after 120 task runs' worth, like 120 triggerJob calls", async () => {
    const u = await user();
    // A chain, so each DAG run starts one task at a time.
    const chain = Array.from({ length: 50 }, (_, i) => ({ key: `c${i}`, command: "sleep 30", ...(i > 0 ? { dependsOn: [`c${i - 1}`] } : {}) }));
    const id = await createDag(t.app.url, u.token, "storm", chain); // 1 submission
    const runs = [await triggerDag(t.app.url, u.token, id), await triggerDag(t.app.url, u.token, id)]; // 50 + 50
    const third = await gql(t.app.url, `mutation($id: ID!) { triggerDag(id: $id) { id } }`, { id }, u.token);
    // Before: one submission per DAG run, 120 DAG runs (6,000 task runs) a minute.
    expect(code(third)).toBe("RATE_LIMITED");
    expect(third.errors?.[0]?.extensions?.limit).toBe("submissions");
    expect(message(third)).toMatch(/^too many submissions for user dag-attacker-\S+: at most 120 per PT1M; a DAG run counts one per task \(this DAG has 50\); retry in \d+ s$/);
    const made = await gqlOk<{ dagRuns: { edges: unknown[] } }>(t.app.url, `query($id: ID!) { dagRuns(dagId: $id) { edges { node { id } } } }`, { id }, u.token);
    expect(made.dagRuns.edges).toHaveLength(2);
    for (const r of runs) await gqlOk(t.app.url, `mutation($id: ID!) { cancelDagRun(id: $id) { id } }`, { id: r }, u.token);
  });

  it("retryDagRun takes one submission per task it re-runs: a loop of cancelDagRun and retryDagRun of a 50-task DAG is refused like a loop of triggers", async () => {
    const u = await user();
    const wide = Array.from({ length: 50 }, (_, i) => ({ key: `w${i}`, command: "sleep 30" }));
    const id = await createDag(t.app.url, u.token, "recycle", wide); // 1 submission
    const runId = await triggerDag(t.app.url, u.token, id); // 50
    const cancelled = async () => {
      await gqlOk(t.app.url, `mutation($id: ID!) { cancelDagRun(id: $id) { id } }`, { id: runId }, u.token);
      await waitFor(async () => (await gqlOk<{ dagRun: { status: string } }>(t.app.url, `query($id: ID!) { dagRun(id: $id) { status } }`, { id: runId }, u.token)).dagRun.status === "CANCELLED", 30_000);
    };
    // Before: retryDagRun was charged nothing; each cancel and retry queued the DAG's 50 tasks again
    // (1,000 with a DAG of 1,000 tasks), past the budget that refuses a third trigger.
    const answers: Array<string | null> = [];
    for (let i = 0; i < 3; i++) {
      await cancelled();
      const r = await gql(t.app.url, `mutation($id: ID!) { retryDagRun(id: $id) { id } }`, { id: runId }, u.token);
      answers.push(r.errors ? (code(r) ?? "") : null);
      if (r.errors) {
        expect(r.errors[0]?.extensions?.limit).toBe("submissions");
        expect(message(r)).toMatch(/^too many submissions for user dag-attacker-\S+: at most 120 per PT1M; a DAG run's retry counts one per task it re-runs \(50\); retry in \d+ s$/);
        break;
      }
    }
    expect(answers).toEqual([null, "RATE_LIMITED"]);
    const made = await t.app.services.mongo.c.runs.countDocuments({ dagRunId: runId });
    expect(made).toBe(100);
    const after = await gqlOk<{ dagRun: { status: string } }>(t.app.url, `query($id: ID!) { dagRun(id: $id) { status } }`, { id: runId }, u.token);
    expect(after.dagRun.status).toBe("CANCELLED");
  });

  it("another user's DAG id is NOT_FOUND before any submission is charged for its tasks", async () => {
    const victim = await user();
    const mallory = await user();
    const id = await createDag(t.app.url, victim.token, "big-victim", Array.from({ length: 200 }, (_, i) => ({ key: `v${i}`, command: "true" })));
    for (let i = 0; i < 3; i++) expect(code(await gql(t.app.url, `mutation($id: ID!) { triggerDag(id: $id) { id } }`, { id }, mallory.token))).toBe("NOT_FOUND");
    // Mallory's budget was charged one per call, not 200: her own small DAG still triggers.
    const own = await createDag(t.app.url, mallory.token, "small", [{ key: "a", command: "true" }]);
    await finishedDagRun(t.app.url, mallory.token, await triggerDag(t.app.url, mallory.token, own));
  });
});

describe("task runs through the run API", () => {
  it("retryRun on a DAG task's run is FAILED_PRECONDITION pointing to retryDagRun (it re-ran the task behind its DAG run's back)", async () => {
    const u = await user();
    const id = await createDag(t.app.url, u.token, "retry-behind", [{ key: "a", command: "echo '\"sneaky\"' > $KAIROS_RESULT; exit 1" }, { key: "b", command: "true", dependsOn: ["a"] }]);
    const dagRunId = await triggerDag(t.app.url, u.token, id);
    const done = await finishedDagRun(t.app.url, u.token, dagRunId);
    expect(done.status).toBe("FAILED");
    const runId = done.tasks[0]!.run!.id;
    const r = await gql(t.app.url, `mutation($id: ID!) { retryRun(id: $id) { id status } }`, { id: runId }, u.token);
    expect(code(r)).toBe("FAILED_PRECONDITION");
    expect(message(r)).toBe(`run ${runId} is task "a" of DAG run ${dagRunId}; retry it with retryDagRun(id: "${dagRunId}"), which re-runs its failed tasks and their children`);
    const run = await gqlOk<{ run: { status: string; attempt: number } }>(t.app.url, `query($id: ID!) { run(id: $id) { status attempt } }`, { id: runId }, u.token);
    expect(run.run).toEqual({ status: "FAILED", attempt: 1 });
    // Another user's task run stays NOT_FOUND (the check comes after the ownership one).
    const other = await user();
    expect(code(await gql(t.app.url, `mutation($id: ID!) { retryRun(id: $id) { id } }`, { id: runId }, other.token))).toBe("NOT_FOUND");
  });
});

describe("KAIROS_RESULT that is not a file", () => {
  it("a FIFO, a symbolic link to a host file, a directory: each fails its task with a clear error, and the node carries on", async () => {
    const u = await user();
    const id = await createDag(t.app.url, u.token, "odd-results", [
      // Opening a FIFO for reading blocks until a writer comes: the executor must not wait on it.
      { key: "fifo", command: "mkfifo $KAIROS_RESULT" },
      { key: "link", command: "ln -s /etc/passwd $KAIROS_RESULT" },
      { key: "dir", command: "mkdir $KAIROS_RESULT" },
      { key: "after", command: "echo 1 > $KAIROS_RESULT", trigger: "ALL_DONE", dependsOn: ["fifo", "link", "dir"] },
    ]);
    const run = await finishedDagRun(t.app.url, u.token, await triggerDag(t.app.url, u.token, id), 30_000);
    const error = (k: string) => run.tasks.find((x) => x.key === k)!.run!.error;
    expect(error("fifo")).toBe("RESULT_NOT_A_FILE: KAIROS_RESULT must be a regular file");
    expect(error("link")).toBe("RESULT_NOT_A_FILE: KAIROS_RESULT is a symbolic link; write the result to the file itself");
    expect(error("dir")).toBe("RESULT_NOT_A_FILE: KAIROS_RESULT must be a regular file");
    expect(JSON.stringify(run)).not.toContain("root:");
    expect(run.tasks.find((x) => x.key === "after")).toMatchObject({ status: "SUCCEEDED", result: 1 });
  });
});

describe("wide graphs", () => {
  it("a DAG of more than 20,000 dependencies is BAD_USER_INPUT on tasks (each advance walks every edge)", async () => {
    const u = await user();
    // Each of 1,000 tasks on its 21 predecessors: 20,769 edges, a 200 KB request.
    const tasks = Array.from({ length: 1000 }, (_, i) => ({ key: `t${i}`, command: "true", dependsOn: Array.from({ length: Math.min(i, 21) }, (_, j) => `t${i - 1 - j}`) }));
    const r = await gql(t.app.url, `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`, { input: { name: "wide", tasks: tasksInput(tasks) } }, u.token);
    expect(code(r)).toBe("BAD_USER_INPUT");
    expect(r.errors?.[0]?.extensions?.field).toBe("tasks");
    expect(message(r)).toBe("tasks: a DAG has at most 20000 dependencies (dependsOn entries of all tasks together); this one has 20769");
  });
});

describe("KAIROS_INPUTS of a wide join", () => {
  it("over 16 MiB is refused from the results' sizes, before the executor parses any of them", async () => {
    // 300 parents of ~60 KB each: 18 MB of results. A fake store: only what filesFor reads.
    const parents = Array.from({ length: 300 }, (_, i) => `p${i}`);
    const result = JSON.stringify("x".repeat(60_000));
    const mongo = {
      c: {
        dagRuns: { findOne: async () => ({ paramsJson: "{}", definition: { tasks: [...parents.map((key) => ({ key, dependsOn: [], mapOver: null })), { key: "join", dependsOn: parents, mapOver: null }] } }) },
        runs: { find: () => ({ toArray: async () => parents.map((taskKey) => ({ taskKey, mapIndex: null, resultJson: result })) }) },
      },
    };
    const io = new DagTaskIo(mongo as never);
    const parse = vi.spyOn(JSON, "parse");
    try {
      await expect(io.filesFor({ dagRunId: "r", taskKey: "join", mapIndex: null })).rejects.toThrow(
        `the parents' results come to ${300 * result.length} bytes of KAIROS_INPUTS; at most ${MAX_INPUTS_BYTES} (16 MiB): write smaller results, or join fewer parents`,
      );
      // Before: all 300 parsed, then stringified into one 18 MB string, then refused.
      expect(parse.mock.calls.filter(([text]) => text === result)).toEqual([]);
    } finally {
      parse.mockRestore();
    }
  });
});
