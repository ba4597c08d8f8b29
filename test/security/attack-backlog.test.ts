/**
 * A hostile USER piling up runs that cannot start (docs/security.md, "Runs waiting to start"):
 * a schedule every second whose runs wait forever (a pool no executor serves) made a QUEUED run
 * per slot without end, and so did API calls, as fast as the submission budget allowed. With
 * KAIROS_MAX_WAITING_RUNS (here 8) the owner's waiting runs stop at the bound: the scheduler
 * records SKIPPED_BACKLOG for the slots over it (and moves on), the API refuses with RESOURCE_EXHAUSTED
 * before anything is made or charged beyond the call itself, and another user is not affected.
 * Over the real API, scheduler and executor (dev mode: all in one process).
 */
import { describe, expect, it } from "vitest";
import { code, makeUser, message } from "../helpers/accounts.js";
import { useTestApp } from "../helpers/app.js";
import { gql, gqlOk, waitFor } from "../helpers/graphql.js";

const MAX = 8;
// Staged runs count as waiting: a job every second stages 1–2 runs ahead here (10 with the default PT10S).
const t = useTestApp({ env: { KAIROS_MAX_WAITING_RUNS: String(MAX), KAIROS_RATE_SUBMISSIONS: "30/PT1M", KAIROS_STAGE_AHEAD: "PT1S" } });

/** A skipped slot's reason: the count it saw (at least the bound; a run made while a count was under way may be counted twice for a second). */
function backlogReason(reason: string | null | undefined, tail = `(KAIROS_MAX_WAITING_RUNS=${MAX})`): number {
  const m = /^the owner had (\d+) runs waiting to start(.*)$/.exec(reason ?? "");
  expect(m, String(reason)).not.toBeNull();
  expect(m![2]).toMatch(new RegExp(`${tail.replace(/[()]/g, "\\$&")}$`));
  return Number(m![1]);
}

let users = 0;
const user = () => makeUser(t.app, t.admin, `backlog-${Date.now()}-${users++}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const EVERY_SECOND = { kind: "CRON", cron: "* * * * * *" };

async function createJob(token: string, name: string, pool: string, schedule: Record<string, unknown> = EVERY_SECOND): Promise<string> {
  const r = await gqlOk<{ createJob: { id: string } }>(
    t.app.url,
    `mutation($input: CreateJobInput!) { createJob(input: $input) { id } }`,
    { input: { name, schedule, spec: { kind: "COMMAND", command: "true", pool } } },
    token,
  );
  return r.createJob.id;
}

async function createDag(token: string, name: string, tasks: Array<{ key: string; dependsOn?: string[] }>, extra: Record<string, unknown> = {}): Promise<string> {
  const input = {
    name,
    tasks: tasks.map((k) => ({ key: k.key, spec: { kind: "COMMAND", command: "true", pool: "nowhere" }, dependsOn: k.dependsOn ?? [] })),
    ...extra,
  };
  return (await gqlOk<{ createDag: { id: string } }>(t.app.url, `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`, { input }, token)).createDag.id;
}

/** The owner's runs waiting to start, as stored. */
const waitingOf = (ownerId: string) => t.app.services.mongo.c.runs.countDocuments({ ownerId, status: { $in: ["QUEUED", "PENDING"] } });
const firesOf = (jobId: string) => t.app.services.mongo.c.fires.find({ jobId }).toArray();

/** Samples the owner's waiting runs every 50 ms until `stop()`; the highest seen. */
function sampleWaiting(ownerId: string): { stop: () => Promise<number> } {
  let max = 0;
  let on = true;
  const loop = (async () => {
    while (on) {
      // A failed test leaves it running until the app is gone: it stops at the first error.
      max = Math.max(max, await waitingOf(ownerId).catch(() => ((on = false), 0)));
      await sleep(50);
    }
  })();
  return {
    stop: async () => {
      on = false;
      await loop;
      return max;
    },
  };
}

describe("a user's runs waiting to start are bounded (KAIROS_MAX_WAITING_RUNS)", () => {
  it("a schedule every second whose runs cannot start stops at the bound (SKIPPED_BACKLOG), another user's keeps firing and running; firing resumes once the runs are gone", async () => {
    const mallory = await user();
    const bob = await user();
    const bobJob = await createJob(bob.token, "bob-every-second", "default");
    const sampling = sampleWaiting(mallory.id);
    const pile = await createJob(mallory.token, "pile-up", "nowhere");

    // Every FIRED slot made a run that waits for ever: at the bound, the slots are skipped.
    await waitFor(async () => ((await waitingOf(mallory.id)) === MAX && (await firesOf(pile)).filter((f) => f.outcome === "SKIPPED_BACKLOG").length >= 3) || null, 30_000, 100);
    const fires = await firesOf(pile);
    const skipped = fires.filter((f) => f.outcome === "SKIPPED_BACKLOG");
    expect(fires.filter((f) => f.outcome === "FIRED")).toHaveLength(MAX);
    for (const f of skipped) expect(backlogReason(f.reason)).toBeGreaterThanOrEqual(MAX);
    expect(skipped.every((f) => f.runId === null)).toBe(true);
    // The schedule moves on: every slot has one outcome, none is retried.
    expect(new Set(fires.map((f) => f.slotAt.getTime())).size).toBe(fires.length);

    // Bob's schedule fired every slot, and his runs ran.
    const bobFires = await firesOf(bobJob);
    expect(bobFires.length).toBeGreaterThanOrEqual(3);
    expect(bobFires.map((f) => f.outcome)).toEqual(bobFires.map(() => "FIRED"));
    await waitFor(async () => (await t.app.services.mongo.c.runs.countDocuments({ jobId: bobJob, status: "SUCCEEDED" })) >= 2 || null, 10_000, 100);

    // Mallory cancels her waiting runs: her schedule fires again (after the count's second), up to the bound again.
    const queued = await t.app.services.mongo.c.runs.find({ ownerId: mallory.id, status: "QUEUED" }).toArray();
    for (const r of queued) await gqlOk(t.app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: r._id }, mallory.token);
    const drained = new Date();
    await waitFor(async () => (await t.app.services.mongo.c.fires.countDocuments({ jobId: pile, outcome: "FIRED", recordedAt: { $gt: drained } })) >= 1 || null, 10_000, 100);
    await waitFor(
      async () => ((await waitingOf(mallory.id)) === MAX && (await t.app.services.mongo.c.fires.countDocuments({ jobId: pile, outcome: "SKIPPED_BACKLOG", recordedAt: { $gt: drained } })) >= 1) || null,
      30_000,
      100,
    );
    await sleep(1_500);
    const most = await sampling.stop();
    expect(most).toBe(MAX);
    expect(await waitingOf(mallory.id)).toBe(MAX);
    expect((await firesOf(bobJob)).every((f) => f.outcome === "FIRED")).toBe(true);

    for (const [token, id] of [[mallory.token, pile], [bob.token, bobJob]] as const) await gqlOk(t.app.url, `mutation($id: ID!) { deleteJob(id: $id) }`, { id }, token);
    // The outcome is in the API too.
    const seen = await gql(t.app.url, `query { __type(name: "FireOutcome") { enumValues { name } } }`, {}, t.admin);
    expect(JSON.stringify(seen)).toContain("SKIPPED_BACKLOG");
  });

  it("a scheduled DAG piles no more than the bound, its first tasks counted together", async () => {
    const mallory = await user();
    const sampling = sampleWaiting(mallory.id);
    // Three root tasks a fire: 3, 6, then 6 + 3 > 8 is skipped.
    const dag = await createDag(mallory.token, "dag-pile", [{ key: "a" }, { key: "b" }, { key: "c" }, { key: "d", dependsOn: ["a", "b", "c"] }], { schedule: EVERY_SECOND });
    await waitFor(async () => ((await waitingOf(mallory.id)) === 6 && (await firesOf(dag)).filter((f) => f.outcome === "SKIPPED_BACKLOG").length >= 3) || null, 30_000, 100);
    const fires = await firesOf(dag);
    expect(fires.filter((f) => f.outcome === "FIRED")).toHaveLength(2);
    const tail = `, and this DAG run's 3 first tasks would take it over the bound (KAIROS_MAX_WAITING_RUNS=${MAX})`;
    for (const f of fires.filter((x) => x.outcome === "SKIPPED_BACKLOG")) expect(backlogReason(f.reason, tail)).toBeGreaterThanOrEqual(6);
    expect(await t.app.services.mongo.c.dagRuns.countDocuments({ dagId: dag })).toBe(2);
    expect(await sampling.stop()).toBe(6);

    // A one-root DAG of the same owner (6 waiting): two more DAG runs, then the bound.
    const one = await createDag(mallory.token, "dag-pile-one", [{ key: "a" }, { key: "b", dependsOn: ["a"] }], { schedule: EVERY_SECOND });
    await waitFor(async () => ((await waitingOf(mallory.id)) === MAX && (await firesOf(one)).filter((f) => f.outcome === "SKIPPED_BACKLOG").length >= 2) || null, 30_000, 100);
    expect((await firesOf(one)).filter((f) => f.outcome === "FIRED")).toHaveLength(2);
    for (const f of (await firesOf(one)).filter((x) => x.outcome === "SKIPPED_BACKLOG")) expect(backlogReason(f.reason)).toBeGreaterThanOrEqual(MAX);
    expect(await waitingOf(mallory.id)).toBe(MAX);
    for (const id of [dag, one]) await gqlOk(t.app.url, `mutation($id: ID!) { deleteDag(id: $id) }`, { id }, mallory.token);
  });

  it("the API refuses runs over the bound with RESOURCE_EXHAUSTED (administrators too), before anything is made and before the budget is charged beyond the call", async () => {
    const mallory = await user();
    const job = await createJob(mallory.token, "manual", "nowhere", { kind: "ONCE", at: "2099-01-01T00:00:00Z" });
    const TRIGGER = `mutation($id: ID!) { triggerJob(id: $id) { id } }`;
    for (let i = 0; i < MAX; i++) await gqlOk(t.app.url, TRIGGER, { id: job }, mallory.token);

    const over = await gql(t.app.url, TRIGGER, { id: job }, mallory.token);
    expect(code(over)).toBe("RESOURCE_EXHAUSTED");
    expect(message(over)).toBe(
      `too many runs waiting to start: the owner has ${MAX} or more runs waiting (QUEUED or PENDING), and this run would take it over the bound of ${MAX} (KAIROS_MAX_WAITING_RUNS); ` +
        "wait for some to start, or cancel some (cancelRun, or pause or delete the jobs making them)",
    );
    expect(code(await gql(t.app.url, TRIGGER, { id: job }, t.admin))).toBe("RESOURCE_EXHAUSTED");
    const yearly = await createJob(mallory.token, "yearly", "nowhere", { kind: "CRON", cron: "0 0 1 1 *", startAt: "2019-01-01T00:00:00Z" });
    const backfill = await gql(t.app.url, `mutation($id: ID!) { backfillJob(id: $id, from: "2019-06-01T00:00:00Z", to: "2021-06-01T00:00:00Z") { requested } }`, { id: yearly }, mallory.token);
    expect(code(backfill)).toBe("RESOURCE_EXHAUSTED");
    expect(message(backfill)).toMatch(/and these 2 runs would take it over the bound of 8/);

    // A DAG of 3 tasks: refused as 3 runs. Ten refusals charge ten submissions (the calls), not
    // thirty: with 30 a minute, 13 spent before, charging the runs would be RATE_LIMITED by now.
    const dag = await createDag(mallory.token, "manual-dag", [{ key: "a" }, { key: "b" }, { key: "c" }]);
    for (let i = 0; i < 10; i++) {
      const r = await gql(t.app.url, `mutation($id: ID!) { triggerDag(id: $id) { id } }`, { id: dag }, mallory.token);
      expect([i, code(r)]).toEqual([i, "RESOURCE_EXHAUSTED"]);
      expect(message(r)).toMatch(/and these 3 runs would take it over the bound of 8 \(KAIROS_MAX_WAITING_RUNS\)/);
    }
    expect(await t.app.services.mongo.c.dagRuns.countDocuments({ dagId: dag })).toBe(0);
    expect(await t.app.services.mongo.c.runs.countDocuments({ ownerId: mallory.id })).toBe(MAX);

    // A retry puts a run back to wait: refused at the bound too.
    const runs = await t.app.services.mongo.c.runs.find({ ownerId: mallory.id }).toArray();
    await gqlOk(t.app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: runs[0]!._id }, mallory.token);
    await sleep(1_100); // the count is a second old at most
    await gqlOk(t.app.url, TRIGGER, { id: job }, mallory.token);
    const retry = await gql(t.app.url, `mutation($id: ID!) { retryRun(id: $id) { id } }`, { id: runs[0]!._id }, mallory.token);
    expect(code(retry)).toBe("RESOURCE_EXHAUSTED");
    expect((await t.app.services.mongo.c.runs.findOne({ _id: runs[0]!._id }))?.status).toBe("CANCELLED");
    expect(await waitingOf(mallory.id)).toBe(MAX);

    // Another user is not affected.
    const bob = await user();
    const bobJob = await createJob(bob.token, "bob-manual", "nowhere", { kind: "ONCE", at: "2099-01-01T00:00:00Z" });
    await gqlOk(t.app.url, TRIGGER, { id: bobJob }, bob.token);
  });
});
