/**
 * Idempotent submission over real HTTP: racing createJob, triggerJob and backfillJob requests
 * with one idempotency key make one job / one run / one set of runs and all get the same answer;
 * the same key with different input is a FAILED_PRECONDITION; keys are per user; a failed first request
 * frees its key; a key is forgotten after its 24 h.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/app.js";
import { code, makeJob, makeUser, message } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";

const t = useTestApp();
const RACERS = 8;

const CREATE = `mutation($input: CreateJobInput!, $key: String) { createJob(input: $input, idempotencyKey: $key) { id name } }`;
const TRIGGER = `mutation($id: ID!, $key: String) { triggerJob(id: $id, idempotencyKey: $key) { id } }`;
const BACKFILL = `mutation($id: ID!, $from: DateTime!, $to: DateTime!, $key: String) {
  backfillJob(id: $id, from: $from, to: $to, idempotencyKey: $key) { requested existing runs { id scheduledFor } } }`;
const input = (name: string) => ({ name, schedule: { kind: "ONCE", at: "2099-01-01T00:00:00Z" }, spec: { kind: "COMMAND", command: "true" } });
const runsOf = async (token: string, id: string) =>
  (await gqlOk(t.app.url, `query($id: ID!) { runs(jobId: $id, first: 100) { edges { node { id } } } }`, { id }, token)).runs.edges.length;

describe("idempotent submission", () => {
  it("racing createJob calls with one key make one job and all answer it", async () => {
    const u = await makeUser(t.app, t.admin, "idem-create");
    const answers = await Promise.all(Array.from({ length: RACERS }, () => gql(t.app.url, CREATE, { input: input("once-only"), key: "create-1" }, u.token)));
    for (const a of answers) expect(a.errors, JSON.stringify(a.errors)).toBeUndefined();
    const ids = new Set(answers.map((a) => a.data!.createJob.id));
    expect(ids.size).toBe(1);
    const jobs = await gqlOk(t.app.url, `{ jobs { edges { node { id } } } }`, {}, u.token);
    expect(jobs.jobs.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([...ids]);
    // A later retry gets the same answer too.
    expect((await gqlOk(t.app.url, CREATE, { input: input("once-only"), key: "create-1" }, u.token)).createJob.id).toBe([...ids][0]);
  });

  it("racing triggerJob calls with one key make one run", async () => {
    const u = await makeUser(t.app, t.admin, "idem-trigger");
    const job = await makeJob(t.app, u.token, "triggered");
    const answers = await Promise.all(Array.from({ length: RACERS }, () => gqlOk(t.app.url, TRIGGER, { id: job, key: "trigger-1" }, u.token)));
    expect(new Set(answers.map((a) => a.triggerJob.id)).size).toBe(1);
    expect(await runsOf(u.token, job)).toBe(1);
    // Another key is another request; no key is never deduplicated.
    await gqlOk(t.app.url, TRIGGER, { id: job, key: "trigger-2" }, u.token);
    await gqlOk(t.app.url, TRIGGER, { id: job }, u.token);
    await gqlOk(t.app.url, TRIGGER, { id: job }, u.token);
    expect(await runsOf(u.token, job)).toBe(4);
  });

  it("racing backfillJob calls with one key make the runs once and all answer the same", async () => {
    const u = await makeUser(t.app, t.admin, "idem-backfill");
    const start = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 20 * 60_000);
    const job = (
      await gqlOk(t.app.url, CREATE, {
        input: { name: "minutely", paused: true, schedule: { kind: "INTERVAL", every: "PT1M", startAt: start.toISOString() }, spec: { kind: "COMMAND", command: "true" } },
      }, u.token)
    ).createJob.id;
    const vars = { id: job, from: start.toISOString(), to: new Date(start.getTime() + 4 * 60_000).toISOString(), key: "backfill-1" };
    const answers = await Promise.all(Array.from({ length: RACERS }, () => gqlOk(t.app.url, BACKFILL, vars, u.token)));
    for (const a of answers) expect(a.backfillJob).toEqual(answers[0]!.backfillJob);
    expect(answers[0]!.backfillJob.requested).toBe(5);
    expect(answers[0]!.backfillJob.existing).toBe(0);
    expect(answers[0]!.backfillJob.runs).toHaveLength(5);
    expect(await runsOf(u.token, job)).toBe(5);
  });

  it("answers FAILED_PRECONDITION for a key reused with different input or for another operation", async () => {
    const u = await makeUser(t.app, t.admin, "idem-conflict");
    const job = await makeJob(t.app, u.token, "first");
    await gqlOk(t.app.url, CREATE, { input: input("keyed"), key: "k" }, u.token);
    const other = await gql(t.app.url, CREATE, { input: input("different"), key: "k" }, u.token);
    expect(code(other)).toBe("FAILED_PRECONDITION");
    expect(message(other)).toMatch(/idempotency key "k" was used at .* for createJob with different input/);
    const otherOp = await gql(t.app.url, TRIGGER, { id: job, key: "k" }, u.token);
    expect(code(otherOp)).toBe("FAILED_PRECONDITION");
    expect(await runsOf(u.token, job)).toBe(0);
    const bad = await gql(t.app.url, TRIGGER, { id: job, key: "has spaces" }, u.token);
    expect(bad.errors?.[0]?.extensions?.field).toBe("idempotencyKey");
  });

  it("refuses an empty key (BAD_USER_INPUT) instead of taking it as no key, and makes nothing", async () => {
    // An empty key (an unset variable in a client) used to mean "no key": every retry made another job or run.
    const u = await makeUser(t.app, t.admin, "idem-empty");
    const job = await makeJob(t.app, u.token, "empty-key");
    const dag = (await gqlOk(t.app.url, `mutation { createDag(input: {name: "d", tasks: [{key: "a", spec: {command: "true"}}]}) { id } }`, {}, u.token)).createDag.id;
    const from = new Date(Date.now() - 60_000).toISOString();
    const refusals = [
      await gql(t.app.url, CREATE, { input: input("empty"), key: "" }, u.token),
      await gql(t.app.url, TRIGGER, { id: job, key: "" }, u.token),
      await gql(t.app.url, BACKFILL, { id: job, from, to: new Date().toISOString(), key: "" }, u.token),
      await gql(t.app.url, `mutation($key: String) { createDag(input: {name: "e", tasks: [{key: "a", spec: {command: "true"}}]}, idempotencyKey: $key) { id } }`, { key: "" }, u.token),
      await gql(t.app.url, `mutation($id: ID!, $key: String) { triggerDag(id: $id, idempotencyKey: $key) { id } }`, { id: dag, key: "" }, u.token),
    ];
    for (const r of refusals) {
      expect(code(r), JSON.stringify(r)).toBe("BAD_USER_INPUT");
      expect(r.errors?.[0]?.extensions?.field).toBe("idempotencyKey");
      expect(message(r)).toMatch(/must be 1–255 printable ASCII characters/);
    }
    expect(await runsOf(u.token, job)).toBe(0);
    const jobs = await gqlOk(t.app.url, `{ jobs { edges { node { name } } } }`, {}, u.token);
    expect(jobs.jobs.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual(["empty-key"]);
    const dags = await gqlOk(t.app.url, `{ dags(first: 10) { edges { node { name } } } }`, {}, u.token);
    expect(dags.dags.edges.map((e: { node: { name: string } }) => e.node.name)).toEqual(["d"]);
    const dagRuns = await gqlOk(t.app.url, `query($id: ID!) { dagRuns(dagId: $id, first: 10) { edges { node { id } } } }`, { id: dag }, u.token);
    expect(dagRuns.dagRuns.edges).toEqual([]);
  });

  it("keys are per user", async () => {
    const a = await makeUser(t.app, t.admin, "idem-a");
    const b = await makeUser(t.app, t.admin, "idem-b");
    const ja = (await gqlOk(t.app.url, CREATE, { input: input("same"), key: "shared" }, a.token)).createJob.id;
    const jb = (await gqlOk(t.app.url, CREATE, { input: input("same"), key: "shared" }, b.token)).createJob.id;
    expect(ja).not.toBe(jb);
    // And B cannot read A's job through A's key.
    expect(code(await gql(t.app.url, `query($id: ID!) { job(id: $id) { id } }`, { id: ja }, b.token))).toBe("NOT_FOUND");
  });

  it("a failed first request frees its key; an expired key is forgotten", async () => {
    const u = await makeUser(t.app, t.admin, "idem-expiry");
    const failed = await gql(t.app.url, CREATE, { input: { ...input("bad"), priority: 42 }, key: "retry-me" }, u.token);
    expect(code(failed)).toBe("BAD_USER_INPUT");
    await gqlOk(t.app.url, CREATE, { input: input("good"), key: "retry-me" }, u.token);

    const job = await makeJob(t.app, u.token, "daily");
    const first = (await gqlOk(t.app.url, TRIGGER, { id: job, key: "yesterday" }, u.token)).triggerJob.id;
    expect((await gqlOk(t.app.url, TRIGGER, { id: job, key: "yesterday" }, u.token)).triggerJob.id).toBe(first);
    // 24 h later (the record's expiry moved into the past): the key is new again.
    await t.app.services.mongo.c.idempotency.updateOne({ ownerId: u.id, key: "yesterday" }, { $set: { expiresAt: new Date(Date.now() - 1) } });
    const second = (await gqlOk(t.app.url, TRIGGER, { id: job, key: "yesterday" }, u.token)).triggerJob.id;
    expect(second).not.toBe(first);
    expect(await runsOf(u.token, job)).toBe(2);
  });
});
