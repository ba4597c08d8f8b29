/**
 * Per-user concurrency limit (issue #5: "enforced at dispatch, so one user's burst cannot starve
 * others"). One user with maxConcurrentRuns = 2 submits a burst of 16 one-second runs; another
 * user, without a limit, submits 4 runs just after. The executor has 4 slots.
 *
 * Checked with the programs' own start/end lines: the limited user never has more than 2 programs
 * running at once; the other user's runs start at once instead of waiting behind the burst; every
 * run of both users succeeds (parked runs are put back, none is lost); the slots are all given back.
 * And the reaper repair: a slot left by a crash is released after two passes, a parked run whose
 * owner has room is woken.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { newId } from "../../src/store/mongo.js";
import { ADMIN, startTestApp, type TestApp } from "../helpers/app.js";
import { gqlOk, login } from "../helpers/graphql.js";
import { waitUntil } from "./harness.js";

interface Line {
  user: string;
  runId: string;
  kind: "start" | "end";
  at: number;
}

describe("per-user concurrency limit", () => {
  let app: TestApp;
  let ledger: string;
  let shared: string;
  beforeAll(async () => {
    // The jobs write a ledger in a directory bound writable into their sandboxes.
    shared = mkdtempSync(join(tmpdir(), "kairos-user-limit-"));
    chmodSync(shared, 0o777);
    app = await startTestApp({ redisUrl: inject("redisUrl"), env: { KAIROS_SANDBOX_RW_PATHS: shared } });
    ledger = join(shared, "user-limit-ledger.txt");
  });
  afterAll(async () => {
    await app?.dispose();
    rmSync(shared, { recursive: true, force: true });
  });

  const read = (): Line[] => {
    let text = "";
    try {
      text = readFileSync(ledger, "utf8");
    } catch {
      return [];
    }
    return text
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => {
        const [user, runId, kind, at] = l.split(" ");
        return { user: user!, runId: runId!, kind: kind as Line["kind"], at: Number(at) };
      });
  };

  /** Most programs of `user` running at the same time, from the start/end lines. */
  const peak = (lines: Line[], user: string) => {
    const events = lines.filter((l) => l.user === user).map((l) => ({ at: l.at, d: l.kind === "start" ? 1 : -1 }));
    events.sort((a, b) => a.at - b.at || a.d - b.d); // an end at the same ms as a start goes first
    let cur = 0;
    let max = 0;
    for (const e of events) max = Math.max(max, (cur += e.d));
    return max;
  };

  it(
    "keeps a bursting user at its limit and lets another user's runs through at once",
    async () => {
      const admin = await login(app.url, ADMIN.username, ADMIN.password);
      for (const [u, limit] of [["burst", 2], ["other", null]] as const) {
        await gqlOk(
          app.url,
          `mutation($u: String!, $n: Int) { createUser(username: $u, password: "password-${u}", maxConcurrentRuns: $n) { id } }`,
          { u, n: limit },
          admin,
        );
      }
      const tokens = { burst: await login(app.url, "burst", "password-burst"), other: await login(app.url, "other", "password-other") };
      const command = (user: string) =>
        `umask 0; echo "${user} $KAIROS_RUN_ID start $(date +%s%3N)" >> '${ledger}'; sleep 1; echo "${user} $KAIROS_RUN_ID end $(date +%s%3N)" >> '${ledger}'`;
      const create = (user: "burst" | "other", i: number) =>
        gqlOk(
          app.url,
          `mutation($i: CreateJobInput!) { createJob(input: $i) { id } }`,
          { i: { name: `${user}-${i}`, schedule: { kind: "ONCE" }, spec: { command: command(user) } } },
          tokens[user],
        );
      for (let i = 0; i < 16; i++) await create("burst", i);
      const otherSubmitted = Date.now();
      for (let i = 0; i < 4; i++) await create("other", i);

      const { c } = app.services.mongo;
      const ids = Object.fromEntries(
        await Promise.all(["burst", "other"].map(async (u) => [u, (await c.users.findOne({ username: u }))!._id] as const)),
      );
      await waitUntil(
        "all 20 runs to succeed",
        async () => (await c.runs.countDocuments({ ownerId: { $in: [ids.burst, ids.other] }, status: "SUCCEEDED" })) === 20,
        40_000,
        200,
      );
      const lines = read();
      const otherStarts = lines.filter((l) => l.user === "other" && l.kind === "start").map((l) => l.at - otherSubmitted);
      const burstEnds = lines.filter((l) => l.user === "burst" && l.kind === "end").map((l) => l.at);
      const summary =
        `burst peak ${peak(lines, "burst")}, other peak ${peak(lines, "other")}; other's runs started ` +
        `${otherStarts.sort((a, b) => a - b).join("/")} ms after submission; the burst ended ${Math.max(...burstEnds) - otherSubmitted} ms after it`;
      process.stderr.write(`[user-limit.test] ${summary}\n`);

      expect(peak(lines, "burst"), summary).toBeLessThanOrEqual(2);
      expect(peak(lines, "burst"), summary).toBe(2);
      expect(lines.filter((l) => l.kind === "start").length, summary).toBe(20);
      // The burst alone needs 8 s at 2 at a time; the other user's 4 runs share the 2 free slots.
      expect(Math.max(...otherStarts), summary).toBeLessThan(Math.max(...burstEnds) - otherSubmitted - 2_000);
      const burst = await c.users.findOne({ _id: ids.burst });
      expect(burst?.runSlots ?? []).toEqual([]);
      expect(await c.runs.countDocuments({ ownerId: ids.burst, heldByLimit: true })).toBe(0);
    },
    60_000,
  );

  it("repairs slots left by a crash and wakes parked runs whose owner has room", async () => {
    const { c } = app.services.mongo;
    const runs = app.services.runs;
    const owner = (await c.users.findOne({ username: "burst" }))!;
    // A slot whose attempt is gone (the executor died between the run's update and the release).
    const ghost = `${newId()}:1`;
    await c.users.updateOne({ _id: owner._id }, { $addToSet: { runSlots: ghost } });
    const first = await runs.reconcileUserSlots(new Set());
    expect(first.released).toBe(0);
    expect(first.suspects.has(ghost)).toBe(true);
    const second = await runs.reconcileUserSlots(first.suspects);
    expect(second.released).toBe(1);
    expect((await c.users.findOne({ _id: owner._id }))?.runSlots ?? []).not.toContain(ghost);

    // A parked run whose wake-up was lost: the owner now has room, the reaper's pass queues it.
    await c.users.updateOne({ _id: owner._id }, { $set: { maxConcurrentRuns: 1, runSlots: [] } });
    const jobs = await c.jobs.find({ ownerId: owner._id }).limit(1).toArray();
    const runId = newId();
    const now = new Date();
    await c.runs.insertOne({
      ...(await c.runs.findOne({ jobId: jobs[0]!._id }))!,
      _id: runId,
      fireKey: `${jobs[0]!._id}@manual:${runId}`,
      status: "QUEUED",
      heldByLimit: true,
      fencingToken: 0,
      queuedAt: now,
      createdAt: now,
      history: [],
    });
    // The test app's reaper (every 0.5 s) makes the same call; either of them wakes it.
    await runs.reconcileUserSlots(new Set());
    await waitUntil("the woken run to succeed", async () => (await c.runs.findOne({ _id: runId, status: "SUCCEEDED" })) !== null, 15_000, 100);
  });
});
