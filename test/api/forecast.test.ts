/**
 * forecast (issue #31) through the API: a user's forecast covers their jobs (paused ones left
 * out), an administrator's the cluster's, a scheduled DAG counts its first tasks in their pools,
 * 60 jobs on one cron minute raise a hotspot naming them, the job cap is said in the answer, and
 * bad input is refused with what is allowed. (Accuracy against what fires over a day:
 * test/timing/forecast.test.ts.)
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/tokens.js";
import { ForecastService } from "../../src/core/forecast.js";
import { useTestApp } from "../helpers/app.js";
import { code, makeUser, message } from "../helpers/accounts.js";
import { gql, gqlOk } from "../helpers/graphql.js";
import { queuedRunDoc } from "../helpers/runs.js";

const t = useTestApp();
const MIN = 60_000;
const FORECAST = `query($w: String!, $pool: String, $f: Float, $m: Int) { forecast(within: $w, pool: $pool, hotspotFactor: $f, hotspotMinRuns: $m) {
  scope from to jobsRead maxJobs jobsCapped slots slotsCapped notes
  pools { pool total peak peakAt median minutes { at runs } }
  hotspots { pool at minutes runs median jobCount jobIds suggestedSpread suggestion } } }`;

interface Forecast {
  scope: string;
  jobsRead: number;
  maxJobs: number;
  jobsCapped: boolean;
  notes: string[];
  pools: Array<{ pool: string; total: number; peak: number; median: number; minutes: Array<{ at: string; runs: number }> }>;
  hotspots: Array<{ pool: string; at: string; minutes: string[]; runs: number; jobCount: number; jobIds: string[]; suggestedSpread: string; suggestion: string }>;
}

let a: Principal;
let b: Principal;
let aToken = "";
let bToken = "";
const hourly: string[] = [];
let paused = "";

const ask = async (token: string, vars: Record<string, unknown> = {}) => (await gqlOk<{ forecast: Forecast }>(t.app.url, FORECAST, { w: "PT24H", ...vars }, token)).forecast;
const pool = (f: Forecast, name: string) => f.pools.find((p) => p.pool === name);

beforeAll(async () => {
  // Not within 15 s of an hour's turn: an hourly job made just before it may not have fired yet when asked.
  for (;;) {
    const intoHour = Date.now() % (60 * MIN);
    if (intoHour > 15_000 && intoHour < 60 * MIN - 15_000) break;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  const ua = await makeUser(t.app, t.admin, "forecast-a");
  const ub = await makeUser(t.app, t.admin, "forecast-b");
  [aToken, bToken] = [ua.token, ub.token];
  a = { userId: ua.id, username: "forecast-a", role: "USER" };
  b = { userId: ub.id, username: "forecast-b", role: "USER" };
  const jobs = t.app.services.jobs;
  const spec = (pool: string) => ({ kind: "COMMAND" as const, command: "true", pool });
  for (let i = 0; i < 60; i++) hourly.push((await jobs.create(a, { name: `hourly-${i}`, schedule: { kind: "CRON", cron: "0 * * * *" }, spec: spec("fc-a") }))._id);
  paused = (await jobs.create(a, { name: "paused", schedule: { kind: "CRON", cron: "0 * * * *" }, spec: spec("fc-a") }))._id;
  await jobs.pause(a, paused);
  const t0 = Date.now();
  // From 65 min on, every 10 min: 138 slots before the window ends (the forecast is asked within 5 min).
  await jobs.create(a, { name: "ten-minutes", schedule: { kind: "INTERVAL", every: "PT10M", startAt: t0 + 65 * MIN }, spec: spec("fc-a2") });
  await jobs.create(a, { name: "once", schedule: { kind: "ONCE", at: t0 + 120 * MIN }, spec: spec("fc-a2") });
  // Three of A's runs waiting to retry in 2 h (their retry timers armed): one minute of fc-retry.
  const retryAt = new Date(Math.floor((t0 + 120 * MIN) / MIN) * MIN + 5_000);
  await t.app.services.mongo.c.runs.insertMany(
    Array.from({ length: 3 }, () => queuedRunDoc(ua.id, { status: "RETRY_SCHEDULED", pool: "fc-retry", retryAt, attempt: 1, scheduledFor: new Date(t0 - MIN) })),
  );
  for (let i = 0; i < 5; i++) await jobs.create(b, { name: `half-past-${i}`, schedule: { kind: "CRON", cron: "30 * * * *" }, spec: spec("fc-b") });
  await gqlOk(
    t.app.url,
    `mutation($input: CreateDagInput!) { createDag(input: $input) { id } }`,
    {
      input: {
        name: "hourly-dag",
        schedule: { kind: "CRON", cron: "15 * * * *" },
        tasks: [
          { key: "a", spec: { kind: "COMMAND", command: "true", pool: "fc-dag" }, dependsOn: [] },
          { key: "b", spec: { kind: "COMMAND", command: "true", pool: "fc-dag" }, dependsOn: [] },
          { key: "c", spec: { kind: "COMMAND", command: "true", pool: "fc-dag-later" }, dependsOn: ["a", "b"] },
        ],
      },
    },
    bToken,
  );
}, 120_000);

describe("forecast", () => {
  it("covers a user's own active jobs, and warns about the minute 60 of them share", async () => {
    const f = await ask(aToken);
    expect(f.scope).toBe("OWN");
    expect(f.pools.map((p) => p.pool)).toEqual(["fc-a", "fc-a2", "fc-retry"]);
    // The armed retry timers: three runs in one minute.
    expect(pool(f, "fc-retry")).toMatchObject({ total: 3, peak: 3 });
    expect(pool(f, "fc-retry")!.minutes).toHaveLength(1);
    // 60 hourly jobs, 24 fires each; the paused one is not counted.
    expect(pool(f, "fc-a")).toMatchObject({ total: 1440, peak: 60, median: 0 });
    expect(pool(f, "fc-a")!.minutes).toHaveLength(24);
    expect(pool(f, "fc-a")!.minutes.every((m) => new Date(m.at).getUTCMinutes() === 0 && m.runs === 60)).toBe(true);
    expect(pool(f, "fc-a2")!.total).toBe(138 + 1);
    expect(f.jobsRead).toBe(62);
    expect(f.jobsCapped).toBe(false);

    expect(f.hotspots).toHaveLength(1);
    const h = f.hotspots[0];
    expect(h).toMatchObject({ pool: "fc-a", runs: 60, jobCount: 60, suggestedSpread: "PT1H" });
    expect(h.minutes).toHaveLength(24);
    expect(h.jobIds).toHaveLength(50);
    expect(h.jobIds.every((id) => hourly.includes(id))).toBe(true);
    expect(h.jobIds).not.toContain(paused);
    expect(h.suggestion).toContain("60 jobs make 60 runs in pool fc-a in the same minute");
    expect(h.suggestion).toContain('spread: "PT1H"');

    // A higher floor: no warning.
    expect((await ask(aToken, { m: 61 })).hotspots).toEqual([]);
    // A shorter window.
    const hour = await ask(aToken, { w: "PT1H" });
    expect(pool(hour, "fc-a")!.total).toBe(60);
  });

  it("gives an administrator the cluster, a DAG's fires as its first tasks' runs, one pool when asked", async () => {
    const f = await ask(t.admin);
    expect(f.scope).toBe("CLUSTER");
    expect(pool(f, "fc-a")!.total).toBe(1440);
    expect(pool(f, "fc-b")!.total).toBe(120);
    expect(pool(f, "fc-dag")!.total).toBe(48);
    expect(pool(f, "fc-dag-later")).toBeUndefined();
    expect(f.notes.join(" ")).toContain("a DAG counts its first tasks' runs");

    const only = await ask(t.admin, { pool: "fc-b" });
    expect(only.pools.map((p) => p.pool)).toEqual(["fc-b"]);
    // The pool's 5 jobs and the scheduled DAG (its pools are known once read).
    expect(only.jobsRead).toBe(6);
  });

  it("shows a user nothing of another's jobs", async () => {
    const f = await ask(bToken);
    expect(f.pools.map((p) => p.pool)).toEqual(["fc-b", "fc-dag"]);
    expect(f.jobsRead).toBe(6);
  });

  it("says when it read only part of the jobs", async () => {
    const service = new ForecastService({ mongo: t.app.services.mongo, clock: Date.now, maxJobs: 10 });
    const f = await service.forecast({ ...a, role: "ADMIN" }, { within: "PT24H" });
    expect(f.jobsRead).toBe(10);
    expect(f.jobsCapped).toBe(true);
    expect(f.maxJobs).toBe(10);
    expect(f.notes[0]).toMatch(/^only the first 10 jobs were read \(the soonest due\)/);
  });

  it("shows the busiest pools when there are more than it returns, and says so", async () => {
    const service = new ForecastService({ mongo: t.app.services.mongo, clock: Date.now, maxPools: 1 });
    const f = await service.forecast({ ...a, role: "ADMIN" }, { within: "PT24H" });
    expect(f.pools.map((p) => p.pool)).toEqual(["fc-a"]);
    expect(f.notes[0]).toMatch(/^\d+ pools have runs due; the 1 busiest are shown: ask for one pool to see another$/);
  });

  it("refuses bad input, saying what is allowed", async () => {
    for (const w of ["PT0S", "PT30S", "PT25H", "P2D", "-PT1H", "tomorrow"]) {
      const r = await gql(t.app.url, FORECAST, { w }, aToken);
      expect(code(r), w).toBe("BAD_USER_INPUT");
      expect(message(r), w).toMatch(/^within: /);
    }
    expect(message(await gql(t.app.url, FORECAST, { w: "P2D" }, aToken))).toBe('within: must be from PT1M to PT24H (got "P2D")');
    const badPool = await gql(t.app.url, FORECAST, { w: "PT1H", pool: " " }, aToken);
    expect([code(badPool), message(badPool)]).toEqual(["BAD_USER_INPUT", 'pool: must be a pool\'s name, 1 to 100 characters (got " ")']);
    const badFactor = await gql(t.app.url, FORECAST, { w: "PT1H", f: 0.5 }, aToken);
    expect([code(badFactor), message(badFactor)]).toEqual(["BAD_USER_INPUT", "hotspotFactor: must be a number from 1 to 1000 (got 0.5)"]);
    const badMin = await gql(t.app.url, FORECAST, { w: "PT1H", m: 0 }, aToken);
    expect([code(badMin), message(badMin)]).toEqual(["BAD_USER_INPUT", "hotspotMinRuns: must be a whole number from 1 to 1000000 (got 0)"]);
    expect(code(await gql(t.app.url, FORECAST, { w: "PT1H" }))).toBe("UNAUTHENTICATED");
  });
});
