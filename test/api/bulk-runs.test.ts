/**
 * cancelRuns and retryRuns (issue #28): cancelRun and retryRun for up to 100 ids, each id answered
 * on its own (the run, or the error the one-run mutation gives), one failing id never stopping
 * the others; retryRuns takes one submission per run, and once the budget is spent the rest are
 * RATE_LIMITED entries.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { makeUser } from "../helpers/accounts.js";
import { gql, gqlOk, waitFor } from "../helpers/graphql.js";
import { queuedRunDoc } from "../helpers/runs.js";
import { createDag, finishedDagRun, triggerDag } from "../dag/helpers.js";

const CANCEL = `mutation($ids: [ID!]!) { cancelRuns(ids: $ids) { id run { id status cancelRequested finishedAt history { status } } error { code message } } }`;
const RETRY = `mutation($ids: [ID!]!) { retryRuns(ids: $ids) { id run { id status attempt } error { code message } } }`;
const CREATE = `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`;
const TRIGGER = `mutation($id: ID!) { triggerJob(id: $id) { id } }`;

interface Entry {
  id: string;
  run: { id: string; status: string; cancelRequested?: boolean; finishedAt?: string | null; attempt?: number; history?: Array<{ status: string }> } | null;
  error: { code: string; message: string } | null;
}

/** A job in a pool no executor serves: its triggered runs wait QUEUED. */
async function waitingRuns(url: string, token: string, name: string, n: number): Promise<string[]> {
  const job = (await gqlOk(url, CREATE, { input: { name, schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "true", pool: "nowhere" } } }, token)).createJob.id as string;
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await gqlOk(url, TRIGGER, { id: job }, token)).triggerJob.id);
  return ids;
}

describe("cancelRuns and retryRuns", () => {
  const t = useTestApp();

  it("cancels the caller's ids and answers another user's or an unknown id NOT_FOUND, in the order given, repeats once", async () => {
    const alice = await makeUser(t.app, t.admin, "bulk-alice");
    const bob = await makeUser(t.app, t.admin, "bulk-bob");
    const [a1, a2] = await waitingRuns(t.app.url, alice.token, "a", 2);
    const [b1] = await waitingRuns(t.app.url, bob.token, "b", 1);
    const unknown = "0123456789abcdef01234567";
    const r = (await gqlOk<{ cancelRuns: Entry[] }>(t.app.url, CANCEL, { ids: [a1, b1, unknown, a2, a1] }, alice.token)).cancelRuns;
    expect(r.map((e) => e.id)).toEqual([a1, b1, unknown, a2]);
    expect(r[0]).toMatchObject({ run: { id: a1, status: "CANCELLED" }, error: null });
    expect(r[3]).toMatchObject({ run: { id: a2, status: "CANCELLED" }, error: null });
    // Another user's run is answered exactly as an unknown one: nothing about it leaks.
    expect(r[1]).toEqual({ id: b1, run: null, error: { code: "NOT_FOUND", message: `run ${b1} not found` } });
    expect(r[2]).toEqual({ id: unknown, run: null, error: { code: "NOT_FOUND", message: `run ${unknown} not found` } });
    // Bob's run is untouched; the administrator may cancel it.
    const RUN = `query($id: ID!) { run(id: $id) { status } }`;
    expect((await gqlOk(t.app.url, RUN, { id: b1 }, bob.token)).run.status).toBe("QUEUED");
    expect((await gqlOk<{ cancelRuns: Entry[] }>(t.app.url, CANCEL, { ids: [b1] }, t.admin)).cancelRuns[0]!.run!.status).toBe("CANCELLED");
    // One id, as cancelRun answers it.
    const single = await gql(t.app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: unknown }, alice.token);
    expect(single.errors?.[0]?.message).toBe(r[2]!.error!.message);
  });

  it("is idempotent: cancelling again changes nothing and answers FAILED_PRECONDITION as cancelRun does", async () => {
    const owner = await makeUser(t.app, t.admin, "bulk-twice");
    const [id] = await waitingRuns(t.app.url, owner.token, "twice", 1);
    const first = (await gqlOk<{ cancelRuns: Entry[] }>(t.app.url, CANCEL, { ids: [id] }, owner.token)).cancelRuns[0]!;
    expect(first.run).toMatchObject({ status: "CANCELLED" });
    const again = (await gqlOk<{ cancelRuns: Entry[] }>(t.app.url, CANCEL, { ids: [id, id] }, owner.token)).cancelRuns;
    expect(again).toHaveLength(1);
    expect(again[0]!.error).toEqual({ code: "FAILED_PRECONDITION", message: `run ${id} is CANCELLED; only PENDING, SCHEDULED, QUEUED, RETRY_SCHEDULED or RUNNING runs can be cancelled` });
    const single = await gql(t.app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id }, owner.token);
    expect(single.errors?.[0]).toMatchObject({ message: again[0]!.error!.message, extensions: { code: "FAILED_PRECONDITION" } });
    const now = (await gqlOk(t.app.url, `query($id: ID!) { run(id: $id) { status finishedAt history { status } } }`, { id }, owner.token)).run;
    expect(now.finishedAt).toBe(first.run!.finishedAt);
    expect(now.history.filter((h: { status: string }) => h.status === "CANCELLED")).toHaveLength(1);
  });

  it("answers a RUNNING run with cancelRequested (CANCELLING), also when asked twice, and the run then ends CANCELLED", async () => {
    const owner = await makeUser(t.app, t.admin, "bulk-running");
    const job = (await gqlOk(t.app.url, CREATE, { input: { name: "sleeper", schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "sleep 30" } } }, owner.token)).createJob.id;
    const id = (await gqlOk(t.app.url, TRIGGER, { id: job }, owner.token)).triggerJob.id as string;
    const RUN = `query($id: ID!) { run(id: $id) { status cancelRequested } }`;
    await waitFor(async () => (await gqlOk(t.app.url, RUN, { id }, owner.token)).run.status === "RUNNING", 15_000);
    const [waiting] = await waitingRuns(t.app.url, owner.token, "beside", 1);
    const r = (await gqlOk<{ cancelRuns: Entry[] }>(t.app.url, CANCEL, { ids: [id, waiting] }, owner.token)).cancelRuns;
    expect(r[0]).toMatchObject({ id, run: { status: "CANCELLING", cancelRequested: true }, error: null });
    expect(r[1]).toMatchObject({ id: waiting, run: { status: "CANCELLED" }, error: null });
    const again = (await gqlOk<{ cancelRuns: Entry[] }>(t.app.url, CANCEL, { ids: [id] }, owner.token)).cancelRuns[0]!;
    // Still being killed (CANCELLING), or already ended by its executor (FAILED_PRECONDITION, as cancelRun would say).
    if (again.error) expect(again.error.message).toBe(`run ${id} is CANCELLED; only PENDING, SCHEDULED, QUEUED, RETRY_SCHEDULED or RUNNING runs can be cancelled`);
    else expect(again.run).toMatchObject({ status: "CANCELLING", cancelRequested: true });
    await waitFor(async () => (await gqlOk(t.app.url, RUN, { id }, owner.token)).run.status === "CANCELLED", 15_000);
  });

  it("takes at most 100 ids a call, naming the limit", async () => {
    const ids = Array.from({ length: 101 }, (_, i) => `0123456789abcdef0123${String(i).padStart(4, "0")}`);
    for (const m of [CANCEL, RETRY]) {
      const r = await gql(t.app.url, m, { ids }, t.admin);
      expect(r.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "ids" });
      expect(r.errors?.[0]?.message).toBe("ids: at most 100 ids per call (got 101); send the rest in further calls");
    }
    // 100 are taken: each unknown id its own NOT_FOUND entry.
    const r = (await gqlOk<{ cancelRuns: Entry[] }>(t.app.url, CANCEL, { ids: ids.slice(0, 100) }, t.admin)).cancelRuns;
    expect(r).toHaveLength(100);
    expect(r.every((e, i) => e.id === ids[i] && e.error?.code === "NOT_FOUND")).toBe(true);
    expect((await gqlOk(t.app.url, CANCEL, { ids: [] }, t.admin)).cancelRuns).toEqual([]);
  });

  it("retries the caller's finished runs, and answers a DAG task's run FAILED_PRECONDITION with retryRun's message", async () => {
    const owner = await makeUser(t.app, t.admin, "bulk-retry");
    const other = await makeUser(t.app, t.admin, "bulk-retry-other");
    const [r1, r2] = await waitingRuns(t.app.url, owner.token, "r", 2);
    const [o1] = await waitingRuns(t.app.url, other.token, "o", 1);
    await gqlOk(t.app.url, CANCEL, { ids: [r1, o1] }, t.admin);
    const dagId = await createDag(t.app.url, owner.token, "bulk-dag", [{ key: "only", command: "true" }]);
    const dagRunId = await triggerDag(t.app.url, owner.token, dagId);
    await finishedDagRun(t.app.url, owner.token, dagRunId);
    const task = (await gqlOk(t.app.url, `query($f: RunFilter) { runs(filter: $f) { edges { node { id } } } }`, { f: { dagRunId } }, owner.token)).runs.edges[0].node.id as string;
    const r = (await gqlOk<{ retryRuns: Entry[] }>(t.app.url, RETRY, { ids: [r1, task, o1, r2] }, owner.token)).retryRuns;
    expect(r.map((e) => e.id)).toEqual([r1, task, o1, r2]);
    expect(r[0]).toMatchObject({ run: { id: r1, status: "QUEUED", attempt: 2 }, error: null });
    const conflict = `run ${task} is task "only" of DAG run ${dagRunId}; retry it with retryDagRun(id: "${dagRunId}"), which re-runs its failed tasks and their children`;
    expect(r[1]).toEqual({ id: task, run: null, error: { code: "FAILED_PRECONDITION", message: conflict } });
    expect(r[2]).toEqual({ id: o1, run: null, error: { code: "NOT_FOUND", message: `run ${o1} not found` } });
    // Still QUEUED: retryRun's own FAILED_PRECONDITION.
    expect(r[3]!.error?.code).toBe("FAILED_PRECONDITION");
    for (const e of [r[1]!, r[3]!]) {
      const single = await gql(t.app.url, `mutation($id: ID!) { retryRun(id: $id) { id } }`, { id: e.id }, owner.token);
      expect(single.errors?.[0]).toMatchObject({ message: e.error!.message, extensions: { code: "FAILED_PRECONDITION" } });
    }
  });

  it("a DAG task's run has its dagRunId and taskKey; a job's run has neither", async () => {
    const owner = await makeUser(t.app, t.admin, "run-dag-fields");
    const [plain] = await waitingRuns(t.app.url, owner.token, "p", 1);
    const dagId = await createDag(t.app.url, owner.token, "fields-dag", [{ key: "build", command: "true" }]);
    const dagRunId = await triggerDag(t.app.url, owner.token, dagId);
    await finishedDagRun(t.app.url, owner.token, dagRunId);
    const q = `query($f: RunFilter) { runs(filter: $f) { edges { node { id jobName dagRunId taskKey } } } }`;
    const task = (await gqlOk(t.app.url, q, { f: { dagRunId } }, owner.token)).runs.edges.map((e: { node: unknown }) => e.node);
    expect(task).toEqual([{ id: expect.any(String), jobName: "fields-dag/build", dagRunId, taskKey: "build" }]);
    const one = (await gqlOk(t.app.url, `query($id: ID!) { run(id: $id) { dagRunId taskKey } }`, { id: plain }, owner.token)).run;
    expect(one).toEqual({ dagRunId: null, taskKey: null });
  });
});

describe("retryRuns under a submission budget of 5 a minute", () => {
  const t = useTestApp({ env: { KAIROS_RATE_SUBMISSIONS: "5/PT1M" } });

  it("takes one submission per id, as retryRun, and answers the ids past the budget RATE_LIMITED without trying them", async () => {
    const user = await makeUser(t.app, t.admin, "bulk-budget");
    // Cancelled runs written straight into the store (a pool nobody serves): making them through the API would spend the budget.
    const docs = Array.from({ length: 8 }, () => queuedRunDoc(user.id, { status: "CANCELLED", queuedAt: null, finishedAt: new Date(), pool: "nowhere", spec: { ...queuedRunDoc(user.id).spec, pool: "nowhere" } }));
    await t.app.services.mongo.c.runs.insertMany(docs);
    const ids = docs.map((d) => d._id);
    const r = (await gqlOk<{ retryRuns: Entry[] }>(t.app.url, RETRY, { ids: [...ids.slice(0, 2), "0123456789abcdef01234567", ...ids.slice(2)] }, user.token)).retryRuns;
    expect(r).toHaveLength(9);
    // Every id takes one, the unknown one too (as retryRun: the submission is taken first).
    expect(r.slice(0, 5).map((e) => e.error?.code ?? e.run!.status)).toEqual(["QUEUED", "QUEUED", "NOT_FOUND", "QUEUED", "QUEUED"]);
    for (const e of r.slice(5)) {
      expect(e.run).toBeNull();
      expect(e.error?.code).toBe("RATE_LIMITED");
      expect(e.error?.message).toMatch(/^too many submissions for user bulk-budget: at most 5 per PT1M; retryRuns takes one per run it retries; retry in \d+ s$/);
    }
    const left = await t.app.services.mongo.c.runs.find({ _id: { $in: ids.slice(4) } }).toArray();
    expect(left.map((d) => d.status)).toEqual(["CANCELLED", "CANCELLED", "CANCELLED", "CANCELLED"]);
    // The budget is spent: retryRun is refused whole, as before.
    const single = await gql(t.app.url, `mutation($id: ID!) { retryRun(id: $id) { id } }`, { id: ids[7] }, user.token);
    expect(single.errors?.[0]?.extensions?.code).toBe("RATE_LIMITED");
  });
});
