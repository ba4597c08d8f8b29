/**
 * clusterStats and clusterStatsUpdated (issue #31): figures from runs seeded with known statuses,
 * lateness and waits — runs by status in and out of the window, throughput, lateness p50/p99, a
 * pool's depth and oldest wait, dead letters, the schedulers' shards — what a user sees of them
 * (their own runs only, no schedulers), refused windows, the indexes the reads go through, and one
 * computation per pass shared by every subscriber of the same figures.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunDoc } from "../../src/domain/documents.js";
import { countEndedSince } from "../../src/store/index.js";
import { useTestApp } from "../helpers/app.js";
import { code, makeUser, message } from "../helpers/accounts.js";
import { collect, gql, gqlOk, waitFor, wsClient } from "../helpers/graphql.js";
import { queuedRunDoc } from "../helpers/runs.js";

const t = useTestApp();
const MIN = 60_000;
const POOL = "stats-queue";

const STATS = `query($w: String!) { clusterStats(window: $w) {
  at window scope ended endedCapped throughput deadLetters deadLettersInWindow shardCount unownedShards
  runs { status count } lateness { p50Ms p99Ms samples capped }
  pools { pool depth oldestWaitMs oldestRunId } nodes { edges { node { id name status cpus allocatedCpu memoryMb allocatedMemoryMb } } }
  schedulers { id shards } } }`;

interface Stats {
  scope: string;
  window: string;
  ended: number;
  throughput: number;
  deadLetters: number;
  deadLettersInWindow: number;
  shardCount: number | null;
  unownedShards: number[] | null;
  runs: Array<{ status: string; count: number }>;
  lateness: { p50Ms: number | null; p99Ms: number | null; samples: number; capped: boolean };
  pools: Array<{ pool: string; depth: number; oldestWaitMs: number | null; oldestRunId: string | null }>;
  nodes: { edges: Array<{ node: { id: string; cpus: number; allocatedCpu: number } }> };
  schedulers: Array<{ id: string; shards: number[] }> | null;
}

const count = (s: Stats, status: string) => s.runs.find((r) => r.status === status)?.count;

let a: { id: string; token: string };
let b: { id: string; token: string };
let oldestB = "";

/** A run of `ownerId` that ended `agoMs` ago in `status`, started `lateMs` after its scheduled time. */
function ended(ownerId: string, status: RunDoc["status"], agoMs: number, lateMs: number | null): RunDoc {
  const finishedAt = new Date(Date.now() - agoMs);
  const scheduledFor = new Date(finishedAt.getTime() - 30_000);
  return queuedRunDoc(ownerId, {
    status,
    pool: "stats-done",
    scheduledFor,
    startedAt: lateMs === null ? null : new Date(scheduledFor.getTime() + lateMs),
    finishedAt,
  });
}

beforeAll(async () => {
  a = await makeUser(t.app, t.admin, "stats-a");
  b = await makeUser(t.app, t.admin, "stats-b");
  const now = Date.now();
  const runs: RunDoc[] = [
    // A: 100 runs ended 1-50 min ago, started 10, 20, … 1000 ms late.
    ...Array.from({ length: 100 }, (_, i) => ended(a.id, "SUCCEEDED", (1 + (i % 50)) * MIN, (i + 1) * 10)),
    // B: 50 failed 5 s late, 3 dead that never started, 20 successes from 3 h ago (outside PT1H).
    ...Array.from({ length: 50 }, () => ended(b.id, "FAILED", 5 * MIN, 5_000)),
    ...Array.from({ length: 3 }, () => ended(b.id, "DEAD", MIN, null)),
    ...Array.from({ length: 20 }, () => ended(b.id, "SUCCEEDED", 180 * MIN, 1)),
    // Waiting in a pool no executor serves: A's 4 queued a minute ago, B's 2 two minutes ago and one staged for later.
    ...Array.from({ length: 4 }, (_, i) => queuedRunDoc(a.id, { pool: POOL, queuedAt: new Date(now - MIN + i) })),
    ...Array.from({ length: 2 }, (_, i) => queuedRunDoc(b.id, { pool: POOL, queuedAt: new Date(now - 2 * MIN + i) })),
    queuedRunDoc(b.id, { pool: POOL, queuedAt: new Date(now - 10 * MIN), notBefore: new Date(now + 60 * MIN) }),
  ];
  oldestB = runs.find((r) => r.ownerId === b.id && r.pool === POOL && !r.notBefore)!._id;
  await t.app.services.mongo.c.runs.insertMany(runs);
}, 30_000);

describe("clusterStats", () => {
  it("gives an administrator the cluster's figures", async () => {
    // The reaper puts the seeded QUEUED runs (staged one included) in their ready queue: the pool's depth.
    const s = await waitFor(async () => {
      const r = (await gqlOk<{ clusterStats: Stats }>(t.app.url, STATS, { w: "PT1H" }, t.admin)).clusterStats;
      return r.pools.find((p) => p.pool === POOL)?.depth === 7 ? r : null;
    }, 15_000, 300);
    expect(s.scope).toBe("CLUSTER");
    expect(s.window).toBe("PT1H");
    expect(count(s, "SUCCEEDED")).toBe(100);
    expect(count(s, "FAILED")).toBe(50);
    expect(count(s, "DEAD")).toBe(3);
    expect(count(s, "QUEUED")).toBe(7);
    expect(count(s, "RUNNING")).toBe(0);
    expect(s.ended).toBe(153);
    expect(s.throughput).toBeCloseTo(153 / 3600, 3);
    // 150 started: 10…1000 ms and fifty of 5000 ms; nearest rank: the 75th and the 149th.
    expect(s.lateness).toEqual({ p50Ms: 750, p99Ms: 5_000, samples: 150, capped: false });
    const pool = s.pools.find((p) => p.pool === POOL)!;
    expect(pool.oldestRunId).toBe(oldestB);
    expect(pool.oldestWaitMs).toBeGreaterThanOrEqual(2 * MIN - 5);
    expect(pool.oldestWaitMs).toBeLessThan(2 * MIN + 20_000);
    expect(s.deadLetters).toBe(3);
    expect(s.deadLettersInWindow).toBe(3);
    // The dev app's one scheduler holds all 8 shards.
    expect(s.shardCount).toBe(8);
    expect(s.schedulers).toHaveLength(1);
    expect(s.schedulers![0].shards).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(s.unownedShards).toEqual([]);
    expect(s.nodes.edges.length).toBeGreaterThanOrEqual(1);
    expect(s.nodes.edges[0].node.cpus).toBeGreaterThan(0);

    // A day's window takes in B's older successes.
    const day = (await gqlOk<{ clusterStats: Stats }>(t.app.url, STATS, { w: "PT24H" }, t.admin)).clusterStats;
    expect(count(day, "SUCCEEDED")).toBe(120);
  });

  it("gives a user their own runs' figures, and no schedulers", async () => {
    const s = (await gqlOk<{ clusterStats: Stats }>(t.app.url, STATS, { w: "PT1H" }, a.token)).clusterStats;
    expect(s.scope).toBe("OWN");
    expect(count(s, "SUCCEEDED")).toBe(100);
    expect(count(s, "FAILED")).toBe(0);
    expect(count(s, "DEAD")).toBe(0);
    expect(count(s, "QUEUED")).toBe(4);
    expect(s.ended).toBe(100);
    expect(s.lateness).toEqual({ p50Ms: 500, p99Ms: 990, samples: 100, capped: false });
    expect(s.pools).toHaveLength(1);
    expect(s.pools[0]).toMatchObject({ pool: POOL, depth: 4 });
    expect(s.pools[0].oldestWaitMs).toBeGreaterThanOrEqual(MIN - 5);
    expect(s.pools[0].oldestWaitMs).toBeLessThan(MIN + 20_000);
    expect(s.deadLetters).toBe(0);
    expect(s.schedulers).toBeNull();
    expect(s.shardCount).toBeNull();
    expect(s.unownedShards).toBeNull();

    const sb = (await gqlOk<{ clusterStats: Stats }>(t.app.url, STATS, { w: "PT1H" }, b.token)).clusterStats;
    expect(count(sb, "FAILED")).toBe(50);
    expect(count(sb, "SUCCEEDED")).toBe(0);
    expect(sb.deadLetters).toBe(3);
    // B's staged run does not count as waiting: its oldest is one queued two minutes ago.
    expect(sb.pools[0]).toMatchObject({ pool: POOL, depth: 3, oldestRunId: oldestB });
    expect(sb.lateness).toEqual({ p50Ms: 5_000, p99Ms: 5_000, samples: 50, capped: false });
  });

  it("refuses a window that is not a duration from PT1M to PT24H, saying so", async () => {
    for (const w of ["PT0S", "PT59S", "PT25H", "P2D", "-PT1H", "an hour", ""]) {
      const r = await gql(t.app.url, STATS, { w }, t.admin);
      expect(code(r), w).toBe("BAD_USER_INPUT");
      expect(message(r), w).toMatch(/^window: /);
    }
    const r = await gql(t.app.url, STATS, { w: "PT25H" }, t.admin);
    expect(message(r)).toBe('window: must be from PT1M to PT24H (got "PT25H")');
    const anon = await gql(t.app.url, STATS, { w: "PT1H" });
    expect(code(anon)).toBe("UNAUTHENTICATED");
  });

  it("has the indexes its reads name: ended runs by status and by owner, waiting runs by pool", async () => {
    const indexes = await t.app.services.mongo.c.runs.listIndexes().toArray();
    const find = (name: string) => indexes.find((i) => i.name === name);
    expect(find("status_finished")).toMatchObject({ key: { status: 1, finishedAt: -1 }, partialFilterExpression: { finishedAt: { $type: "date" } } });
    expect(find("owner_finished")).toMatchObject({ key: { ownerId: 1, finishedAt: -1 }, partialFilterExpression: { finishedAt: { $type: "date" } } });
    expect(find("queued_pool")).toMatchObject({ key: { pool: 1, queuedAt: 1 }, partialFilterExpression: { status: "QUEUED" } });
    expect(find("finished_ttl")).toMatchObject({ key: { finishedAt: 1 } });
    expect(await countEndedSince(t.app.services.mongo, "SUCCEEDED", new Date(Date.now() - 60 * MIN))).toBe(100);
  });
});

describe("clusterStatsUpdated", () => {
  const SUB = `subscription($w: String!) { clusterStatsUpdated(window: $w) { scope ended schedulers { id } } }`;
  let clients: ReturnType<typeof wsClient>[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
  });

  it("pushes at once and every 5 s, one computation a pass for all the subscribers of the same figures", async () => {
    const stats = t.app.services.clusterStats;
    const before = stats.computations;
    clients = [wsClient(t.app.wsUrl, t.admin), wsClient(t.app.wsUrl, t.admin), wsClient(t.app.wsUrl, t.admin), wsClient(t.app.wsUrl, a.token)];
    type Ev = { clusterStatsUpdated: { scope: string; ended: number; schedulers: unknown[] | null } };
    const subs = clients.map((c) => collect<Ev>(c, SUB, { w: "PT2H" }, (e) => e.length >= 2, 15_000));
    const got = await Promise.all(subs.map((s) => s.done));
    const computed = stats.computations - before;
    for (const [i, g] of got.entries()) {
      expect(g.errors, `subscriber ${i}`).toEqual([]);
      expect(g.events.length, `subscriber ${i}`).toBeGreaterThanOrEqual(2);
    }
    expect(got[0].events[0].clusterStatsUpdated).toMatchObject({ scope: "CLUSTER", ended: 153 });
    expect(got[3].events[0].clusterStatsUpdated).toMatchObject({ scope: "OWN", ended: 100, schedulers: null });
    // Two sets of figures (the cluster's, A's) over about two passes: not one per subscriber and pass.
    expect(computed).toBeLessThanOrEqual(6);
    expect(computed).toBeGreaterThanOrEqual(2);
  }, 30_000);

  it("refuses a bad window before anything flows", async () => {
    const c = wsClient(t.app.wsUrl, t.admin);
    clients.push(c);
    const r = await collect<unknown>(c, SUB, { w: "PT0S" }, () => true, 5_000).done;
    expect(r.events).toEqual([]);
    expect(JSON.stringify(r.errors)).toContain("window: must be from PT1M to PT24H");
  });
});
