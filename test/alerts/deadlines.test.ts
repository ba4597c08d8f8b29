/**
 * DEADLINE_MISSED on the time wheel, over Redis: a slot's run still running at its deadline sends
 * one alert even when Redis loses everything between the fire and the deadline (the deadline is
 * re-armed from alertDeadlines by the reconciler); a run that finished in time sends nothing; a
 * deadline handled again (a replayed timer) or re-armed after it was decided sends nothing more.
 * Each test has its own user and rule (a rule without a job watches all its owner's jobs), all made
 * before the tests, so the schedulers' list of deadline rules is waited for once.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deadlineTimerId } from "../../src/domain/index.js";
import { shardOf } from "../../src/shared-state/index.js";
import { makeUser } from "../helpers/accounts.js";
import type { TestApp } from "../helpers/app.js";
import { gqlOk, waitFor } from "../helpers/graphql.js";
import { finishedRun, submitJob } from "../helpers/job-runs.js";
import type { PrivateRedis } from "../support/local-redis.js";
import type { Receiver } from "./receiver.js";
import { startAlertApp, stopAlertApp } from "./alert-app.js";

let redis: PrivateRedis;
let app: TestApp;
let admin: string;
let rx: Receiver;

/** The rule of each test, made with its owner before the tests (see the module comment). */
const rules: Record<"late" | "ontime" | "twice", { token: string; ruleId: string }> = {} as never;

beforeAll(async () => {
  ({ redis, rx, app, admin } = await startAlertApp());
  const specs = [["late", "PT4S"], ["ontime", "PT3S"], ["twice", "PT2S"]] as const;
  await Promise.all(
    specs.map(async ([name, deadline]) => {
      const { token } = await makeUser(app, admin, `deadline-${name}`);
      rules[name] = { token, ruleId: await deadlineRule(token, `/${name}`, deadline) };
    }),
  );
  await sleep(2_500); // the schedulers' list of deadline rules is read again every 2 s
}, 60_000);

afterAll(() => stopAlertApp({ app, rx, redis }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const deadlineDocs = () => app.services.mongo.db.collection<{ _id: string; state: string; fireKey: string; dueAt: Date }>("alertDeadlines");

async function deadlineRule(token: string, path: string, deadline: string): Promise<string> {
  const r = await gqlOk<{ createAlertRule: { id: string } }>(
    app.url,
    `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`,
    { i: { name: path, on: ["DEADLINE_MISSED"], deadline, webhook: { url: `${rx.base}${path}` } } },
    token,
  );
  return r.createAlertRule.id;
}

describe("deadlines", () => {
  it("a run still running at its deadline alerts once, across a Redis flush between the fire and the deadline", async () => {
    const { token, ruleId } = rules.late;
    // Still running well after the deadline is handled (4 s + the grace): 5 s to spare, as before the grace was shrunk.
    const job = await submitJob(app.url, token, { command: "sleep 10", timeout: "PT30S" });
    const armed = await waitFor(async () => deadlineDocs().findOne({ _id: { $regex: `^${ruleId}\\|${job}@` } as never }), 15_000);
    expect(armed.state).toBe("ARMED");
    const shard = shardOf(job, app.services.state.wheel.shardCount);
    // Handled the configured grace after the deadline (KAIROS_ALERT_TIMER_GRACE; 5 s by default).
    const grace = app.config.alerts.timerGraceMs;
    expect(grace).toBe(1_000);
    expect(await app.services.state.wheel.dueAt(shard, deadlineTimerId(ruleId, armed.fireKey))).toBe(armed.dueAt.getTime() + grace);
    // Redis loses everything, the armed deadline with it.
    const r = new Redis(redis.url);
    await r.flushall();
    await r.quit();
    const [msg] = await waitFor(async () => (rx.on("/late").length > 0 ? rx.on("/late") : null), 25_000);
    expect(msg!.json.events).toEqual(["DEADLINE_MISSED"]);
    expect(msg!.json.alerts[0]).toMatchObject({ event: "DEADLINE_MISSED", fireKey: armed.fireKey, jobId: job });
    expect(msg!.json.alerts[0].detail).toMatch(/missed its deadline of 4 s: run \S+ is still RUNNING/);
    expect(Date.now()).toBeGreaterThanOrEqual(armed.dueAt.getTime() + grace);
    expect((await deadlineDocs().findOne({ _id: armed._id }))!.state).toBe("DONE");
    await finishedRun(app.url, token, job, 30_000);
    await sleep(2_000);
    expect(rx.on("/late")).toHaveLength(1);
  });

  it("a run that finished in time sends nothing", async () => {
    const { token, ruleId } = rules.ontime;
    const job = await submitJob(app.url, token, { command: "true" });
    expect((await finishedRun(app.url, token, job)).status).toBe("SUCCEEDED");
    const doc = await waitFor(async () => {
      const d = await deadlineDocs().findOne({ _id: { $regex: `^${ruleId}\\|${job}@` } as never });
      return d?.state === "DONE" ? d : null;
    }, 15_000);
    expect(doc.dueAt.getTime()).toBeLessThanOrEqual(Date.now());
    await sleep(1_500);
    expect(rx.on("/ontime")).toHaveLength(0);
  });

  it("a deadline handled again, or re-armed after it was decided, sends nothing more", async () => {
    const { token, ruleId } = rules.twice;
    // Ends after its deadline (2 s) whenever the deadline is handled.
    const job = await submitJob(app.url, token, { command: "sleep 6", timeout: "PT30S" });
    await waitFor(async () => (rx.on("/twice").length > 0 ? true : null), 20_000);
    const doc = (await deadlineDocs().findOne({ _id: { $regex: `^${ruleId}\\|${job}@` } as never }))!;
    // The timer replayed (as after a kill between the handling and the completion), and the
    // record put back to ARMED and re-armed at once (as if the DONE write had been lost).
    const shard = shardOf(job, app.services.state.wheel.shardCount);
    await deadlineDocs().updateOne({ _id: doc._id }, { $set: { state: "ARMED" } });
    await app.services.state.wheel.arm(shard, deadlineTimerId(ruleId, doc.fireKey), Date.now());
    await waitFor(async () => ((await deadlineDocs().findOne({ _id: doc._id }))!.state === "DONE" ? true : null), 10_000);
    await sleep(2_500);
    expect(rx.on("/twice")).toHaveLength(1);
    expect(await app.services.mongo.db.collection("alertFirings").countDocuments({ ruleId })).toBe(1);
  });
});
