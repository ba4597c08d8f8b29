/**
 * Attacks on the ready queues' turns between owners (docs/decisions.md, "Ready queues take turns
 * between owners") by a USER over the real API, scheduler and executor.
 *
 * Ordering is made deterministic by one slot held by a blocker while both users queue: after it
 * ends, who starts in what order is decided by the takes alone. Counted from the runs' own start
 * times, not timed.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { makeUser } from "../helpers/accounts.js";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { gqlOk, login } from "../helpers/graphql.js";
import { submitJob } from "../helpers/job-runs.js";
import { waitUntil } from "../chaos/harness.js";

const VICTIM_RUNS = 6;
const PER_QUEUE = 14;
/** The queues a USER can fill on one executor of the default pool: the pool's own, and its script queues (one set of turns since). */
const ATTACK_QUEUES: Array<Record<string, unknown>> = [
  { command: "true" },
  { kind: "SCRIPT", interpreter: "sh", source: "true" },
  { kind: "SCRIPT", interpreter: "bash", source: "true" },
  { kind: "SCRIPT", interpreter: "node", source: "0" },
];

describe.each([
  ["in-memory queues (kairos dev)", false],
  ["Redis queues", true],
])("a USER against the turns, one slot: %s", (_name, onRedis) => {
  let app: TestApp;
  let admin: string;
  beforeAll(async () => {
    app = await startTestApp({
      ...(onRedis ? { redisUrl: inject("redisUrl") } : {}),
      env: { KAIROS_EXECUTOR_SLOTS: "1", KAIROS_RATE_SUBMISSIONS: "100000/PT1M" },
    });
    admin = await login(app.url, ADMIN.username, ADMIN.password);
  });
  afterAll(async () => {
    await app?.dispose();
  });

  it(
    "a user submitting its next run as soon as its last starts does not hold another user's queued runs back",
    async () => {
      // With nothing queued, an owner joined at the last turn taken: below the turn of another
      // owner's backlog, so it was served first at every take, and the turn never moved on.
      const trickle = await makeUser(app, admin, "trickle");
      const waiting = await makeUser(app, admin, "waiting");
      const { c } = app.services.mongo;
      const blocker = await submitJob(app.url, trickle.token, { command: "sleep 1" });
      await waitUntil("the blocker to start", async () => (await c.runs.countDocuments({ jobId: blocker, status: "RUNNING" })) === 1, 30_000, 10);
      const victimJobs: string[] = [];
      for (let i = 0; i < 3; i++) victimJobs.push(await submitJob(app.url, waiting.token, { command: "true" }));
      // The attacker keeps one run queued at most: the next goes in as soon as the last one runs.
      let last = await submitJob(app.url, trickle.token, { command: "sleep 0.6" });
      const attackJobs = [last];
      for (let i = 0; i < 6; i++) {
        const prev = last;
        await waitUntil("the attacker's run to start", async () => (await c.runs.countDocuments({ jobId: prev, startedAt: { $ne: null } })) === 1, 30_000, 10);
        last = await submitJob(app.url, trickle.token, { command: "sleep 0.6" });
        attackJobs.push(last);
      }
      const lastOfAttack = (await c.runs.find({ jobId: { $in: attackJobs.slice(0, -1) } }).sort({ startedAt: -1 }).limit(1).toArray())[0]!;
      const served = await c.runs.countDocuments({ jobId: { $in: victimJobs }, startedAt: { $ne: null, $lt: lastOfAttack.startedAt! } });
      const summary = `${served} of the other user's 3 queued runs started before the attacker's 6th run`;
      process.stderr.write(`[attack-turns.test] ${onRedis ? "redis" : "memory"}: ${summary}\n`);
      // In turns: the other user's 3 runs alternate with the attacker's, all started by then.
      expect(served, summary).toBe(3);
      await waitUntil("the runs to end", async () => (await c.runs.countDocuments({ jobId: { $in: [...victimJobs, ...attackJobs] }, status: "SUCCEEDED" })) === 10, 60_000, 50);
    },
    120_000,
  );

  // The attack worked before the turns were kept per pool (docs/security.md, "Ready queues"): the
  // executor took from its queues in turn, and the owners' turns were kept per queue, so a user
  // with runs in four queues got ~6 starts for each of another user's, not one. Now one take per
  // pool serves all its queues in one set of turns.
  it(
    `another user's ${VICTIM_RUNS} runs in the pool's queue are not held behind one start of the first user per queue it fills`,
    async () => {
      const attacker = await makeUser(app, admin, "spread");
      const victim = await makeUser(app, admin, "plain");
      const { c } = app.services.mongo;
      // The only slot is busy while both users queue; cancelled once they have (not waited out).
      const blocker = await submitJob(app.url, attacker.token, { command: "sleep 60", timeout: "PT2M" });
      await waitUntil("the blocker to start", async () => (await c.runs.countDocuments({ jobId: blocker, status: "RUNNING" })) === 1, 30_000, 10);
      const attackJobs = (
        await Promise.all(ATTACK_QUEUES.flatMap((spec) => Array.from({ length: PER_QUEUE }, () => submitJob(app.url, attacker.token, spec))))
      );
      const victimJobs: string[] = [];
      for (let i = 0; i < VICTIM_RUNS; i++) victimJobs.push(await submitJob(app.url, victim.token, { command: "true" }));
      expect(await c.runs.countDocuments({ jobId: blocker, status: "RUNNING" }), "the blocker must still hold the slot (raise its sleep)").toBe(1);
      const blockerRun = (await c.runs.findOne({ jobId: blocker }))!._id;
      await gqlOk(app.url, `mutation($id: ID!) { cancelRun(id: $id) { id } }`, { id: blockerRun }, attacker.token);
      await waitUntil("the victim's runs to succeed", async () => (await c.runs.countDocuments({ jobId: { $in: victimJobs }, status: "SUCCEEDED" })) === VICTIM_RUNS, 120_000, 50);
      const last = (await c.runs.find({ jobId: { $in: victimJobs } }).sort({ startedAt: -1 }).limit(1).toArray())[0]!;
      const ahead = await c.runs.countDocuments({ jobId: { $in: attackJobs }, startedAt: { $ne: null, $lt: last.startedAt! } });
      const summary = `${ahead} of the first user's ${attackJobs.length} runs started before the other user's last of ${VICTIM_RUNS}`;
      process.stderr.write(`[attack-turns.test] ${onRedis ? "redis" : "memory"}: ${summary}\n`);
      // Turns between the two users: one of the first user's runs per run of the other (and the takes in flight).
      expect(ahead, summary).toBeLessThanOrEqual(VICTIM_RUNS + 2);
    },
    180_000,
  );
});
