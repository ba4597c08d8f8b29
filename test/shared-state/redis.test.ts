import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createRedisSharedState, redisKeys } from "../../src/shared-state/redis/index.js";
import { sharedStateContract } from "./contract.js";
import { T0, record } from "./helpers.js";
import { deleteByPrefix, openRedisDeployment } from "./redis-env.js";

const url = inject("redisUrl");

sharedStateContract("redis", openRedisDeployment(url));

describe("redis adapter", () => {
  const prefix = `t-${randomUUID()}`;
  let admin: Redis;
  beforeAll(() => {
    admin = new Redis(url);
  });
  afterAll(async () => {
    await deleteByPrefix(admin, prefix);
    await admin.quit();
  });

  it("keeps every key of a shard under one hash tag", () => {
    const k = redisKeys("kairos").shard(17);
    for (const key of Object.values(k)) expect(key.match(/\{([^}]*)\}/)?.[1]).toBe("17");
    const r = redisKeys("kairos");
    for (const key of [r.ready("gpu"), r.readyOwners("gpu"), r.readyTurns("gpu", ""), r.readyTurns("gpu", "python3"), r.readyLater("gpu"), r.readyData("gpu"), r.readyClaims("gpu")]) expect(key.match(/\{([^}]*)\}/)?.[1]).toBe("gpu");
    expect(r.ready("gpu")).toBe("kairos:ready:{gpu}:queued");
    expect(r.readyTurns("gpu", "")).toBe("kairos:ready:{gpu}:turns:-");
    expect(() => redisKeys("bad{prefix")).toThrow(RangeError);
  });

  it("stores lease validity as data and sets a garbage-collection PEXPIRE beyond it", async () => {
    const s = await createRedisSharedState({ url, prefix, shardCount: 4, leaseGcMarginMs: 5_000 });
    try {
      const epoch = await s.coordinator.acquire(2, "m", T0, 1_000);
      const k = redisKeys(prefix).shard(2);
      expect(await admin.hgetall(k.lease)).toEqual({ holder: "m", epoch: String(epoch), expiresAt: String(T0 + 1_000) });
      const pttl = await admin.pttl(k.lease);
      expect(pttl).toBeGreaterThan(5_000);
      expect(pttl).toBeLessThanOrEqual(6_000);
      expect(await admin.ttl(k.epoch)).toBe(-1); // epochs never expire
    } finally {
      await s.close();
    }
  });

  it("namespaces bus channels by prefix, so deployments on one Redis do not hear each other", async () => {
    const a = await createRedisSharedState({ url, prefix: `${prefix}-a` });
    const b = await createRedisSharedState({ url, prefix: `${prefix}-b` });
    try {
      const heardByA = await record(a.bus, "chan");
      const heardByB = await record(b.bus, "chan");
      await a.bus.publish("chan", "to-a");
      await b.bus.publish("chan", "to-b");
      expect(await heardByA.next(1)).toEqual(["to-a"]);
      expect(await heardByB.next(1)).toEqual(["to-b"]);
      await a.bus.publish("chan", "to-a-again");
      expect(await heardByA.next(2)).toEqual(["to-a", "to-a-again"]);
      // Had b heard "to-a", it would have arrived before this later publish.
      await b.bus.publish("chan", "to-b-again");
      expect(await heardByB.next(2)).toEqual(["to-b", "to-b-again"]);
      await Promise.all([heardByA.stop(), heardByB.stop()]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("close() of one port keeps the others working; closing everything is idempotent", async () => {
    const s = await createRedisSharedState({ url, prefix, shardCount: 2 });
    await s.wheel.close();
    await s.wheel.close();
    expect(await s.ready.size("none")).toBe(0);
    await s.close();
    await s.close();
  });

  it("promotes and takes more runs than one batch of the script's commands holds", async () => {
    const s = await createRedisSharedState({ url, prefix: `${prefix}-many`, shardCount: 2 });
    try {
      const entries = Array.from({ length: 2_500 }, (_, i) => ({
        ownerId: "u",
        runId: `r${String(i).padStart(4, "0")}`,
        priority: i % 3,
        enqueuedAt: T0 + i,
        notBefore: T0 + 50,
        payload: `{"i":${i}}`,
      }));
      for (let i = 0; i < entries.length; i += 500) await s.ready.push("p", entries.slice(i, i + 500));
      const got = await s.ready.take("p", 2_400, T0 + 50, 1_000);
      const expected = [...entries].sort((a, b) => b.priority - a.priority || a.enqueuedAt - b.enqueuedAt).slice(0, 2_400);
      expect(got.taken).toEqual(expected.map((e) => ({ runId: e.runId, payload: e.payload })));
      expect(await s.ready.size("p")).toBe(100);
      expect(await s.ready.claimExpiry("p", expected[2_399]!.runId)).toBe(T0 + 1_050);
    } finally {
      await s.close();
    }
  });

  it("adopts the runs an older version left in its per-queue keys, once, with their turns, staging and claim markers", async () => {
    const p = `${prefix}-legacy`;
    const k = redisKeys(p);
    // As the version with turns per queue wrote them: members "<owner>\0<score, 14 digits><runId>".
    const legacy = async (queue: string, owner: string, runId: string, priority: number, enqueuedAt: number, opts: { notBefore?: number; payload?: string } = {}) => {
      const member = `${owner}\0${String((9 - priority) * 1e13 + enqueuedAt).padStart(14, "0")}${runId}`;
      const old = k.legacyReady(queue);
      await admin.hset(old.entries, runId, member + (opts.payload ?? ""), "|turn", 3);
      if (opts.notBefore === undefined) {
        await admin.zadd(old.runs, 0, member);
        await admin.zadd(old.owners, 3, owner);
      } else await admin.zadd(old.later, opts.notBefore, runId);
    };
    await legacy("gpu", "a", "a1", 5, T0, { payload: "pa1" });
    await legacy("gpu", "a", "a2", 5, T0 + 1);
    await legacy("gpu:sh", "a", "a-sh", 9, T0 + 2, { payload: "pash" });
    await legacy("gpu:python3", "b", "b-py", 5, T0, { notBefore: T0 + 100, payload: "pbpy" });
    await legacy("gpu", "b", "b1", 5, T0 + 5);
    await admin.zadd(k.legacyReady("gpu:sh").claims, T0 + 500, "taken-sh");
    const a = await createRedisSharedState({ url, prefix: p, shardCount: 2 });
    const b = await createRedisSharedState({ url, prefix: p, shardCount: 2 });
    try {
      // Two processes adopt at once: each run is moved once.
      const [first, second] = await Promise.all([a.ready.take("gpu", 2, T0, 1_000, ["sh"]), b.ready.take("gpu", 0, T0, 1_000, ["sh"])]);
      expect(second.taken).toEqual([]);
      // One set of turns: a's best (its sh script, priority 9), then b's.
      expect(first.taken).toEqual([{ runId: "a-sh", payload: "pash" }, { runId: "b1", payload: null }]);
      expect(first.nextAt).toBe(T0 + 100);
      expect(await a.ready.claimExpiry("gpu:sh", "taken-sh")).toBe(T0 + 500);
      expect(await a.ready.size("gpu")).toBe(3);
      expect((await a.ready.take("gpu", 10, T0 + 100, 1_000, ["python3"])).taken.map((t) => t.runId)).toEqual(["a1", "b-py", "a2"]);
      for (const q of ["gpu", "gpu:sh", "gpu:python3"]) {
        const old = k.legacyReady(q);
        expect(await admin.exists(old.runs, old.owners, old.later, old.entries)).toBe(0);
      }
      expect(await admin.exists(k.legacyReady("gpu:sh").claims)).toBe(0);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("gives the store a new generation once its data is lost, the same one to every caller", async () => {
    const p = `${prefix}-gen`;
    const a = await createRedisSharedState({ url, prefix: p, shardCount: 2 });
    const b = await createRedisSharedState({ url, prefix: p, shardCount: 2 });
    try {
      const before = await a.coordinator.generation();
      expect(await b.coordinator.generation()).toBe(before);
      expect(await admin.ttl(redisKeys(p).generation)).toBe(-1); // never expires
      // The deployment's data is lost (as FLUSHALL would, without disturbing other test files).
      await deleteByPrefix(admin, p);
      const [afterA, afterB] = await Promise.all([a.coordinator.generation(), b.coordinator.generation()]);
      expect(afterA).not.toBe(before);
      expect(afterB).toBe(afterA);
      expect(await a.coordinator.generation()).toBe(afterA);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("fails fast with a useful error when Redis is unreachable", async () => {
    await expect(createRedisSharedState({ url: "redis://127.0.0.1:1" })).rejects.toThrow(/ECONNREFUSED|connect/i);
  });
});
