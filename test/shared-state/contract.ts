/**
 * The one contract every SharedState adapter passes (in-memory and Redis). Each adapter's
 * `*.test.ts` calls `sharedStateContract` with a function that opens an isolated deployment.
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Channels, StaleEpochError, type SharedState, type ShardFence } from "../../src/shared-state/ports.js";
import { T0, range, record, type Deployment, type OpenDeployment } from "./helpers.js";

const SHARDS = 8;

/** Takes up to `max` run ids at `now` (claim markers for 1 s), for a taker with `interpreters` (plain runs only by default). */
async function pop(q: SharedState["ready"], pool: string, max: number, now: number, interpreters: readonly string[] = []): Promise<string[]> {
  return (await q.take(pool, max, now, 1_000, interpreters)).taken.map((t) => t.runId);
}

export function sharedStateContract(adapter: string, open: OpenDeployment): void {
  describe(`SharedState contract: ${adapter}`, () => {
    let d: Deployment;
    let s: SharedState;
    beforeEach(async () => {
      d = await open({ shardCount: SHARDS });
      s = d.state;
    });
    afterEach(async () => {
      await d.dispose();
    });

    /** Acquires `shard` for member "owner" at T0 with a long lease and returns its fence. */
    async function own(shard: number, member = "owner", now = T0, ttlMs = 3_600_000): Promise<ShardFence> {
      const epoch = await s.coordinator.acquire(shard, member, now, ttlMs);
      expect(epoch).not.toBeNull();
      return { shard, epoch: epoch! };
    }

    describe("time wheel", () => {
      it("reports its shard count and rejects shards outside it", async () => {
        expect(s.wheel.shardCount).toBe(SHARDS);
        await expect(s.wheel.arm(SHARDS, "j:x", T0)).rejects.toBeInstanceOf(RangeError);
        await expect(s.wheel.arm(-1, "j:x", T0)).rejects.toBeInstanceOf(RangeError);
        await expect(s.wheel.earliest([0, 1.5])).rejects.toBeInstanceOf(RangeError);
      });

      it("claims earliest first, at most `limit`, ties by id", async () => {
        const f = await own(1);
        await s.wheel.arm(1, "j:c", T0 + 30);
        await s.wheel.arm(1, "j:a", T0 + 10);
        await s.wheel.arm(1, "j:b2", T0 + 20);
        await s.wheel.arm(1, "j:b1", T0 + 20);
        expect(await s.wheel.claimDue(f, T0 + 100, 3, 1_000)).toEqual([
          { id: "j:a", dueAt: T0 + 10 },
          { id: "j:b1", dueAt: T0 + 20 },
          { id: "j:b2", dueAt: T0 + 20 },
        ]);
        expect(await s.wheel.claimDue(f, T0 + 100, 3, 1_000)).toEqual([{ id: "j:c", dueAt: T0 + 30 }]);
        expect(await s.wheel.claimDue(f, T0 + 100, 3, 1_000)).toEqual([]);
        expect(await s.wheel.size(1)).toEqual({ armed: 0, inflight: 4 });
      });

      it("claims only timers due at or before `now`", async () => {
        const f = await own(0);
        await s.wheel.arm(0, "j:early", T0 - 5);
        await s.wheel.arm(0, "j:exact", T0);
        await s.wheel.arm(0, "j:late", T0 + 1);
        const got = await s.wheel.claimDue(f, T0, 10, 1_000);
        expect(got.map((t) => t.id)).toEqual(["j:early", "j:exact"]);
        expect(await s.wheel.dueAt(0, "j:late")).toBe(T0 + 1);
        expect(await s.wheel.isInflight(0, "j:early")).toBe(true);
        expect(await s.wheel.isInflight(0, "j:late")).toBe(false);
        expect(await s.wheel.dueAt(0, "j:early")).toBeNull();
        await s.wheel.complete(f, "j:early", null);
        expect(await s.wheel.isInflight(0, "j:early")).toBe(false);
        expect(await s.wheel.claimDue(f, T0, 0, 1_000)).toEqual([]);
      });

      it("arm upserts: re-arming moves the timer", async () => {
        await s.wheel.arm(2, "j:x", T0 + 500);
        await s.wheel.arm(2, "j:x", T0 + 100);
        expect(await s.wheel.dueAt(2, "j:x")).toBe(T0 + 100);
        expect(await s.wheel.size(2)).toEqual({ armed: 1, inflight: 0 });
        expect(await s.wheel.dueAt(2, "j:missing")).toBeNull();
      });

      it("disarm removes a timer from the wheel and from in-flight", async () => {
        const f = await own(3);
        await s.wheel.arm(3, "j:armed", T0 + 50);
        await s.wheel.arm(3, "j:flying", T0);
        await s.wheel.claimDue(f, T0, 10, 1_000);
        await s.wheel.disarm(3, "j:armed");
        await s.wheel.disarm(3, "j:flying");
        await s.wheel.disarm(3, "j:never-there");
        expect(await s.wheel.size(3)).toEqual({ armed: 0, inflight: 0 });
        // Completing a disarmed timer does not bring it back.
        await s.wheel.complete(f, "j:flying", T0 + 60_000);
        expect(await s.wheel.size(3)).toEqual({ armed: 0, inflight: 0 });
      });

      it("keeps claimed timers in flight, then complete re-arms or drops them", async () => {
        const f = await own(4);
        await s.wheel.arm(4, "j:cron", T0);
        await s.wheel.arm(4, "r:once", T0);
        await s.wheel.claimDue(f, T0, 10, 1_000);
        expect(await s.wheel.dueAt(4, "j:cron")).toBeNull();
        expect(await s.wheel.earliest([4])).toBeNull(); // in-flight timers are not in the wheel
        expect(await s.wheel.size(4)).toEqual({ armed: 0, inflight: 2 });

        await s.wheel.complete(f, "j:cron", T0 + 60_000);
        await s.wheel.complete(f, "r:once", null, T0 + 1);
        expect(await s.wheel.dueAt(4, "j:cron")).toBe(T0 + 60_000);
        expect(await s.wheel.dueAt(4, "r:once")).toBeNull();
        expect(await s.wheel.size(4)).toEqual({ armed: 1, inflight: 0 });
        // A second complete of the same claim changes nothing.
        await s.wheel.complete(f, "j:cron", T0 + 5);
        expect(await s.wheel.dueAt(4, "j:cron")).toBe(T0 + 60_000);
      });

      it("an arm while in flight wins over the owner's later complete", async () => {
        const f = await own(4);
        await s.wheel.arm(4, "j:edited", T0);
        await s.wheel.claimDue(f, T0, 1, 1_000);
        await s.wheel.arm(4, "j:edited", T0 + 777); // the API rescheduled the job meanwhile
        expect(await s.wheel.size(4)).toEqual({ armed: 1, inflight: 0 });
        await s.wheel.complete(f, "j:edited", T0 + 60_000);
        expect(await s.wheel.dueAt(4, "j:edited")).toBe(T0 + 777);
      });

      it("replays in-flight timers past their deadline at their original due time", async () => {
        const f = await own(5);
        await s.wheel.arm(5, "j:1", T0 - 100);
        await s.wheel.claimDue(f, T0, 1, 1_000); // deadline T0 + 1000
        await s.wheel.arm(5, "j:2", T0 + 10);
        await s.wheel.claimDue(f, T0 + 10, 1, 1_000); // deadline T0 + 1010
        expect(await s.wheel.replayInflight(f, T0 + 999, false)).toBe(0);
        expect(await s.wheel.replayInflight(f, T0 + 1_000, false)).toBe(1);
        expect(await s.wheel.dueAt(5, "j:1")).toBe(T0 - 100);
        expect(await s.wheel.size(5)).toEqual({ armed: 1, inflight: 1 });
        // A late complete of the replayed timer does not overwrite the replay.
        await s.wheel.complete(f, "j:1", T0 + 60_000);
        expect(await s.wheel.dueAt(5, "j:1")).toBe(T0 - 100);
        // `all` replays regardless of deadline (a new owner on acquisition).
        expect(await s.wheel.replayInflight(f, T0 + 1_001, true)).toBe(1);
        expect(await s.wheel.dueAt(5, "j:2")).toBe(T0 + 10);
        expect(await s.wheel.size(5)).toEqual({ armed: 2, inflight: 0 });
        expect(await s.wheel.replayInflight(f, T0 + 1_001, true)).toBe(0);
      });

      it("earliest() takes the minimum over the given shards only", async () => {
        expect(await s.wheel.earliest([0, 1, 2])).toBeNull();
        expect(await s.wheel.earliest([])).toBeNull();
        await s.wheel.arm(0, "j:a", T0 + 300);
        await s.wheel.arm(1, "j:b", T0 + 200);
        await s.wheel.arm(2, "j:c", T0 + 100);
        await s.wheel.arm(6, "j:d", T0 + 1);
        expect(await s.wheel.earliest([0, 1, 2])).toBe(T0 + 100);
        expect(await s.wheel.earliest([0, 1])).toBe(T0 + 200);
        expect(await s.wheel.earliest([7])).toBeNull();
      });

      it("keeps shards independent", async () => {
        const f1 = await own(1);
        await s.wheel.arm(1, "j:one", T0);
        await s.wheel.arm(2, "j:two", T0);
        expect(await s.wheel.claimDue(f1, T0, 10, 1_000)).toEqual([{ id: "j:one", dueAt: T0 }]);
        expect(await s.wheel.size(2)).toEqual({ armed: 1, inflight: 0 });
      });

      it("arm publishes a wake-up when the timer becomes its shard's earliest", async () => {
        const wake = await record(s.bus, Channels.wheelWake);
        try {
          await s.wheel.arm(2, "j:a", T0 + 100); // new minimum: wake
          await s.wheel.arm(2, "j:b", T0 + 200); // behind j:a: nobody sleeps past it, no wake
          await s.wheel.arm(2, "j:c", T0 + 50); // new minimum: wake
          const msgs = await wake.next(2);
          expect(msgs.map((m) => JSON.parse(m))).toEqual([
            { shard: 2, dueAt: T0 + 100 },
            { shard: 2, dueAt: T0 + 50 },
          ]);
        } finally {
          await wake.stop();
        }
      });

      it("rejects bad arguments", async () => {
        const f = await own(0);
        await expect(s.wheel.arm(0, "j:x", Number.NaN)).rejects.toBeInstanceOf(RangeError);
        await expect(s.wheel.claimDue(f, T0, -1, 1_000)).rejects.toBeInstanceOf(RangeError);
      });

      it("matches a reference model under random operation sequences", async () => {
        const shards = [0, 1];
        const ids = ["a", "b", "c", "d"];
        const fences = await Promise.all(shards.map((sh) => own(sh)));
        const op = fc.oneof(
          fc.record({ kind: fc.constant("arm" as const), shard: fc.constantFrom(...shards), id: fc.constantFrom(...ids), t: fc.integer({ min: 0, max: 20 }) }),
          fc.record({ kind: fc.constant("disarm" as const), shard: fc.constantFrom(...shards), id: fc.constantFrom(...ids) }),
          fc.record({ kind: fc.constant("claim" as const), shard: fc.constantFrom(...shards), t: fc.integer({ min: 0, max: 25 }), limit: fc.integer({ min: 0, max: 3 }) }),
          fc.record({ kind: fc.constant("complete" as const), shard: fc.constantFrom(...shards), id: fc.constantFrom(...ids), next: fc.option(fc.integer({ min: 0, max: 20 })) }),
          fc.record({ kind: fc.constant("replay" as const), shard: fc.constantFrom(...shards), t: fc.integer({ min: 0, max: 40 }), all: fc.boolean() }),
        );
        await fc.assert(
          fc.asyncProperty(fc.array(op, { maxLength: 25 }), async (ops) => {
            const model = shards.map(() => ({ armed: new Map<string, number>(), inflight: new Map<string, { deadline: number; due: number }>() }));
            try {
              for (const o of ops) {
                const m = model[o.shard]!;
                switch (o.kind) {
                  case "arm":
                    await s.wheel.arm(o.shard, o.id, T0 + o.t);
                    m.inflight.delete(o.id);
                    m.armed.set(o.id, T0 + o.t);
                    break;
                  case "disarm":
                    await s.wheel.disarm(o.shard, o.id);
                    m.inflight.delete(o.id);
                    m.armed.delete(o.id);
                    break;
                  case "claim": {
                    const now = T0 + o.t;
                    const expected = [...m.armed]
                      .filter(([, due]) => due <= now)
                      .sort(([ia, a], [ib, b]) => a - b || (ia < ib ? -1 : 1))
                      .slice(0, o.limit)
                      .map(([id, dueAt]) => ({ id, dueAt }));
                    for (const t of expected) {
                      m.armed.delete(t.id);
                      m.inflight.set(t.id, { deadline: now + 10, due: t.dueAt });
                    }
                    expect(await s.wheel.claimDue(fences[o.shard]!, now, o.limit, 10)).toEqual(expected);
                    break;
                  }
                  case "complete":
                    await s.wheel.complete(fences[o.shard]!, o.id, o.next === null ? null : T0 + o.next);
                    if (m.inflight.delete(o.id) && o.next !== null) m.armed.set(o.id, T0 + o.next);
                    break;
                  case "replay": {
                    let moved = 0;
                    for (const [id, f] of m.inflight) {
                      if (!o.all && f.deadline > T0 + o.t) continue;
                      m.inflight.delete(id);
                      m.armed.set(id, f.due);
                      moved++;
                    }
                    expect(await s.wheel.replayInflight(fences[o.shard]!, T0 + o.t, o.all)).toBe(moved);
                    break;
                  }
                }
              }
              for (const sh of shards) {
                const m = model[sh]!;
                expect(await s.wheel.size(sh)).toEqual({ armed: m.armed.size, inflight: m.inflight.size });
                for (const id of ids) expect(await s.wheel.dueAt(sh, id)).toBe(m.armed.get(id) ?? null);
              }
              const all = model.flatMap((m) => [...m.armed.values()]);
              expect(await s.wheel.earliest(shards)).toBe(all.length ? Math.min(...all) : null);
            } finally {
              for (const sh of shards) for (const id of ids) await s.wheel.disarm(sh, id);
            }
          }),
          { numRuns: 40 },
        );
      });
    });

    describe("fencing", () => {
      it("refuses a stale owner after another member took its expired lease", async () => {
        const a = await own(3, "sched-a", T0, 1_000);
        await s.wheel.arm(3, "j:1", T0);
        await s.wheel.arm(3, "j:2", T0 + 10);
        expect(await s.wheel.claimDue(a, T0 + 10, 1, 5_000)).toEqual([{ id: "j:1", dueAt: T0 }]);

        // sched-a stalls past its lease; sched-b takes the shard with a new epoch.
        const b = await own(3, "sched-b", T0 + 1_000, 1_000);
        expect(b.epoch).toBeGreaterThan(a.epoch);

        const refused = await s.wheel.claimDue(a, T0 + 1_001, 10, 5_000).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(StaleEpochError);
        expect(refused).toMatchObject({ shard: 3, epoch: a.epoch });
        await expect(s.wheel.complete(a, "j:1", T0 + 60_000)).rejects.toBeInstanceOf(StaleEpochError);
        await expect(s.wheel.complete(a, "j:1", T0 + 60_000, T0 + 1_001)).rejects.toBeInstanceOf(StaleEpochError);
        await expect(s.wheel.replayInflight(a, T0 + 1_001, true)).rejects.toBeInstanceOf(StaleEpochError);
        // The refused complete did not re-arm and did not clear in-flight.
        expect(await s.wheel.dueAt(3, "j:1")).toBeNull();
        expect(await s.wheel.size(3)).toEqual({ armed: 1, inflight: 1 });

        // The new owner replays everything in flight on acquisition, at the original due time.
        expect(await s.wheel.replayInflight(b, T0 + 1_000, true)).toBe(1);
        expect(await s.wheel.claimDue(b, T0 + 1_000, 10, 5_000)).toEqual([
          { id: "j:1", dueAt: T0 },
          { id: "j:2", dueAt: T0 + 10 },
        ]);
      });

      it("refuses an owner whose lease expired even when nobody took the shard", async () => {
        const a = await own(2, "sched-a", T0, 1_000);
        await s.wheel.arm(2, "j:1", T0);
        await expect(s.wheel.claimDue(a, T0 + 1_000, 10, 5_000)).rejects.toBeInstanceOf(StaleEpochError);
        await expect(s.wheel.replayInflight(a, T0 + 1_000, true)).rejects.toBeInstanceOf(StaleEpochError);
        expect(await s.wheel.claimDue(a, T0 + 999, 10, 5_000)).toHaveLength(1);
        await expect(s.wheel.complete(a, "j:1", T0 + 5, T0 + 1_000)).rejects.toBeInstanceOf(StaleEpochError);
        // Re-acquiring an expired lease, even one's own, is a new acquisition with a new epoch.
        const again = await own(2, "sched-a", T0 + 1_000, 1_000);
        expect(again.epoch).toBeGreaterThan(a.epoch);
        await expect(s.wheel.complete(a, "j:1", T0 + 5)).rejects.toBeInstanceOf(StaleEpochError);
      });

      it("refuses an owner after it released the shard, and never-acquired epochs", async () => {
        const a = await own(1, "sched-a");
        await s.coordinator.release(1, "sched-a", a.epoch);
        await expect(s.wheel.claimDue(a, T0, 10, 1_000)).rejects.toBeInstanceOf(StaleEpochError);
        await expect(s.wheel.claimDue({ shard: 6, epoch: 1 }, T0, 10, 1_000)).rejects.toBeInstanceOf(StaleEpochError);
        await expect(s.wheel.claimDue({ shard: 1, epoch: a.epoch + 1 }, T0, 10, 1_000)).rejects.toBeInstanceOf(StaleEpochError);
      });
    });

    describe("shard coordinator", () => {
      it("acquires free shards, refuses held ones, extends our own", async () => {
        const ea = (await s.coordinator.acquire(0, "a", T0, 1_000))!;
        expect(ea).toBeGreaterThan(0);
        expect(await s.coordinator.acquire(0, "b", T0 + 500, 1_000)).toBeNull();
        expect(await s.coordinator.acquire(0, "a", T0 + 900, 1_000)).toBe(ea); // ours: extended to T0+1900
        expect(await s.coordinator.acquire(0, "b", T0 + 1_500, 1_000)).toBeNull();
        expect(await s.coordinator.holder(0, T0 + 1_899)).toEqual({ memberId: "a", epoch: ea });
        const eb = (await s.coordinator.acquire(0, "b", T0 + 1_900, 1_000))!;
        expect(eb).toBeGreaterThan(ea);
        expect(await s.coordinator.holder(0, T0 + 1_900)).toEqual({ memberId: "b", epoch: eb });
        expect(await s.coordinator.acquire(1, "a", T0, 1_000)).toBe(ea); // epochs are per shard
      });

      it("raises epochs to max(previous + 1, now): increasing even when clocks step back", async () => {
        // Epochs start from the clock, so after a lost epoch key (Redis flush) a fresh acquisition
        // does not hand out an epoch a stale owner from before may still hold.
        expect(await s.coordinator.acquire(3, "a", T0, 1_000)).toBe(T0);
        expect(await s.coordinator.acquire(3, "b", T0 + 5_000, 1_000)).toBe(T0 + 5_000);
        await s.coordinator.release(3, "b", T0 + 5_000);
        expect(await s.coordinator.acquire(3, "c", T0 + 10, 1_000)).toBe(T0 + 5_001); // c's clock is behind
        await s.coordinator.release(3, "c", T0 + 5_001);
        expect(await s.coordinator.acquire(3, "c", T0 + 10.7, 1_000)).toBe(T0 + 5_002);
        expect(await s.coordinator.acquire(4, "a", 0.5, 1_000)).toBe(1); // always a positive integer
      });

      it("renews only a lease still held with the same epoch", async () => {
        const e = (await s.coordinator.acquire(5, "a", T0, 1_000))!;
        expect(await s.coordinator.renew(5, "a", e, T0 + 999, 1_000)).toBe(true);
        expect(await s.coordinator.holder(5, T0 + 1_998)).toEqual({ memberId: "a", epoch: e });
        expect(await s.coordinator.renew(5, "a", e + 1, T0 + 1_000, 1_000)).toBe(false);
        expect(await s.coordinator.renew(5, "b", e, T0 + 1_000, 1_000)).toBe(false);
        expect(await s.coordinator.renew(5, "a", e, T0 + 1_999, 1_000)).toBe(false); // expired
        const e2 = (await s.coordinator.acquire(5, "b", T0 + 2_000, 1_000))!;
        expect(await s.coordinator.renew(5, "a", e, T0 + 2_001, 1_000)).toBe(false);
        expect(await s.coordinator.renew(5, "b", e2, T0 + 2_001, 1_000)).toBe(true);
      });

      it("release frees the shard for the next member; a wrong epoch or member is a no-op", async () => {
        const e = (await s.coordinator.acquire(7, "a", T0, 10_000))!;
        await s.coordinator.release(7, "a", e + 1);
        await s.coordinator.release(7, "b", e);
        expect(await s.coordinator.holder(7, T0 + 1)).toEqual({ memberId: "a", epoch: e });
        await s.coordinator.release(7, "a", e);
        expect(await s.coordinator.holder(7, T0 + 1)).toBeNull();
        expect(await s.coordinator.acquire(7, "b", T0 + 2, 10_000)).toBeGreaterThan(e);
      });

      it("holder() honours expiry at the injected now", async () => {
        expect(await s.coordinator.holder(4, T0)).toBeNull();
        const epoch = await s.coordinator.acquire(4, "a", T0, 1_000);
        expect(await s.coordinator.holder(4, T0 + 999)).toEqual({ memberId: "a", epoch });
        expect(await s.coordinator.holder(4, T0 + 1_000)).toBeNull();
      });

      it("lists members whose heartbeat has not expired, sorted", async () => {
        await s.coordinator.heartbeat("m-b", T0, 1_000);
        await s.coordinator.heartbeat("m-a", T0 + 500, 1_000);
        await s.coordinator.heartbeat("m-c", T0, 5_000);
        expect(await s.coordinator.members(T0 + 999)).toEqual(["m-a", "m-b", "m-c"]);
        expect(await s.coordinator.members(T0 + 1_000)).toEqual(["m-a", "m-c"]);
        await s.coordinator.heartbeat("m-b", T0 + 1_200, 1_000); // back until T0 + 2200
        expect(await s.coordinator.members(T0 + 1_500)).toEqual(["m-b", "m-c"]);
        await s.coordinator.leave("m-c");
        expect(await s.coordinator.members(T0 + 1_500)).toEqual(["m-b"]);
        expect(await s.coordinator.members(T0 + 10_000)).toEqual([]);
      });
      it("keeps one store generation for every caller while the store keeps its data", async () => {
        const peer = await d.peer();
        // Concurrent first callers agree on one id (write-once), and it stays through any use of the ports.
        const [a, b] = await Promise.all([s.coordinator.generation(), peer.coordinator.generation()]);
        expect(typeof a).toBe("string");
        expect(a.length).toBeGreaterThan(0);
        expect(b).toBe(a);
        const fence = await own(0);
        await s.wheel.arm(0, "j:gen", T0);
        await s.wheel.claimDue(fence, T0, 10, 1_000);
        await s.ready.push("p", [{ ownerId: "u", runId: "r-gen", priority: 5, enqueuedAt: T0, payload: "x" }]);
        await s.ready.take("p", 1, T0, 1_000);
        await s.ready.replaceLimited(["u"]);
        await s.coordinator.heartbeat("m", T0, 1_000);
        expect(await peer.coordinator.generation()).toBe(a);
        expect(await s.coordinator.generation()).toBe(a);
        // Another deployment (another store) has another generation.
        const other = await open({ shardCount: SHARDS });
        try {
          expect(await other.state.coordinator.generation()).not.toBe(a);
        } finally {
          await other.dispose();
        }
      });
    });

    describe("ready queue", () => {
      it("pops by priority (high first), then FIFO by enqueue time, then runId", async () => {
        await s.ready.push("default", [
          { ownerId: "u", runId: "low-old", priority: 1, enqueuedAt: T0 },
          { ownerId: "u", runId: "high-new", priority: 9, enqueuedAt: T0 + 50 },
          { ownerId: "u", runId: "mid-new", priority: 5, enqueuedAt: T0 + 20 },
          { ownerId: "u", runId: "mid-old", priority: 5, enqueuedAt: T0 + 10 },
          { ownerId: "u", runId: "mid-tie-b", priority: 5, enqueuedAt: T0 + 15 },
          { ownerId: "u", runId: "mid-tie-a", priority: 5, enqueuedAt: T0 + 15 },
          { ownerId: "u", runId: "zero", priority: 0, enqueuedAt: 0 },
        ]);
        expect(await pop(s.ready, "default", 3, T0)).toEqual(["high-new", "mid-old", "mid-tie-a"]);
        expect(await pop(s.ready, "default", 10, T0)).toEqual(["mid-tie-b", "mid-new", "low-old", "zero"]);
        expect(await pop(s.ready, "default", 10, T0)).toEqual([]);
        expect(await pop(s.ready, "nobody", 10, T0)).toEqual([]);
      });

      it("takes turns between owners: one run each, lowest turn first, ties by owner", async () => {
        const runs = (owner: string, n: number) => range(n).map((i) => ({ ownerId: owner, runId: `${owner}${i + 1}`, priority: 5, enqueuedAt: T0 + i }));
        await s.ready.push("p", runs("a", 5));
        await s.ready.push("p", [...runs("b", 3), ...runs("c", 1)]);
        expect(await pop(s.ready, "p", 4, T0)).toEqual(["a1", "b1", "c1", "a2"]);
        expect(await pop(s.ready, "p", 10, T0)).toEqual(["b2", "a3", "b3", "a4", "a5"]);
        expect(await s.ready.size("p")).toBe(0);
      });

      it("priority orders an owner's own runs, not one owner's against another's", async () => {
        await s.ready.push("p", [
          { ownerId: "loud", runId: "l-9a", priority: 9, enqueuedAt: T0 },
          { ownerId: "loud", runId: "l-9b", priority: 9, enqueuedAt: T0 + 1 },
          { ownerId: "loud", runId: "l-0", priority: 0, enqueuedAt: T0 - 5 },
          { ownerId: "quiet", runId: "q-0", priority: 0, enqueuedAt: T0 + 2 },
          { ownerId: "quiet", runId: "q-3", priority: 3, enqueuedAt: T0 + 3 },
        ]);
        expect(await pop(s.ready, "p", 10, T0)).toEqual(["l-9a", "q-3", "l-9b", "q-0", "l-0"]);
      });

      it("serves an owner that joins behind another's backlog within a round; pushing more does not move a backlog sooner", async () => {
        // One owner's fan-out of 1,000 runs, half of it taken; then another owner's one run.
        await s.ready.push("p", range(1_000).map((i) => ({ ownerId: "fan", runId: `f${String(i).padStart(4, "0")}`, priority: 9, enqueuedAt: T0 })));
        expect(await pop(s.ready, "p", 500, T0)).toHaveLength(500);
        await s.ready.push("p", [{ ownerId: "late", runId: "late-1", priority: 0, enqueuedAt: T0 + 1 }]);
        // It joins at the turn after the last taken, the backlog's own: one run of "fan" (ties by owner), then its run.
        expect(await pop(s.ready, "p", 2, T0)).toEqual(["f0500", "late-1"]);
        // Both with runs queued: they alternate, and a push by one does not put it ahead.
        await s.ready.push("p", [2, 3, 4].map((i) => ({ ownerId: "late", runId: `late-${i}`, priority: 0, enqueuedAt: T0 + i })));
        await s.ready.push("p", range(100).map((i) => ({ ownerId: "fan", runId: `g${String(i).padStart(4, "0")}`, priority: 9, enqueuedAt: T0 - 1 })));
        expect(await pop(s.ready, "p", 6, T0)).toEqual(["g0000", "late-2", "g0001", "late-3", "g0002", "late-4"]);
        expect(await s.ready.size("p")).toBe(1_100 - 504);
      });

      it("an owner pushing one run after each take of its last does not starve another owner's backlog", async () => {
        // The attack: a user that keeps nothing queued and pushes its next run as soon as its last
        // was taken. Joining at the last turn taken (lower than the backlog's next turn) put it
        // first at every take, and the turn never moved on: the backlog was never served again.
        await s.ready.push("p", range(4).map((i) => ({ ownerId: "victim", runId: `v${i + 1}`, priority: 5, enqueuedAt: T0 + i })));
        expect(await pop(s.ready, "p", 1, T0)).toEqual(["v1"]);
        const taken: string[] = [];
        for (let i = 1; i <= 6; i++) {
          await s.ready.push("p", [{ ownerId: "attacker", runId: `a${i}`, priority: 5, enqueuedAt: T0 + 10 + i }]);
          taken.push(...(await pop(s.ready, "p", 1, T0)));
        }
        // One each in turn (the attacker's queue never holds more than two runs).
        expect(taken.filter((r) => r.startsWith("v")), taken.join(" ")).toHaveLength(3);
      });

      it("a staged run joins its owner's turns when due; a removed owner's last run takes the owner out of the turns", async () => {
        await s.ready.push("p", [
          { ownerId: "a", runId: "a1", priority: 5, enqueuedAt: T0 },
          { ownerId: "a", runId: "a2", priority: 5, enqueuedAt: T0 + 1 },
          { ownerId: "a", runId: "a3", priority: 5, enqueuedAt: T0 + 2 },
          { ownerId: "b", runId: "b-later", priority: 5, enqueuedAt: T0 + 100, notBefore: T0 + 100, payload: "pb" },
          { ownerId: "c", runId: "c1", priority: 5, enqueuedAt: T0 },
        ]);
        expect(await pop(s.ready, "p", 1, T0)).toEqual(["a1"]);
        expect(await s.ready.remove("p", "c1")).toBe(true);
        expect(await s.ready.contains("p", "b-later", T0)).toBe(true);
        // b joins at the turn after a1's, a's own: a (ties by owner), then b.
        expect((await s.ready.take("p", 2, T0 + 100, 1_000)).taken).toEqual([
          { runId: "a2", payload: null },
          { runId: "b-later", payload: "pb" },
        ]);
        expect(await pop(s.ready, "p", 5, T0 + 100)).toEqual(["a3"]);
        expect(await s.ready.size("p")).toBe(0);
      });

      it("keeps one set of turns per pool across its queues: runs spread over script queues get one turn each", async () => {
        // The attack: one owner's runs in the pool's queue and three script queues, another's in the pool's queue.
        const runs = (owner: string, tag: string, n: number, at: number) => range(n).map((i) => ({ ownerId: owner, runId: `${owner}-${tag}${i + 1}`, priority: 5, enqueuedAt: T0 + at + i }));
        await s.ready.push("p", runs("a", "cmd", 2, 0));
        await s.ready.push("p:sh", runs("a", "sh", 2, 10));
        await s.ready.push("p:bash", runs("a", "bash", 2, 20));
        await s.ready.push("p:node", runs("a", "node", 2, 30));
        await s.ready.push("p", runs("b", "cmd", 3, 5));
        expect(await s.ready.size("p")).toBe(11);
        const all = ["sh", "bash", "python3", "node"];
        // Turns alternate between the owners; each owner's own runs go by priority and age, whatever queue.
        expect(await pop(s.ready, "p", 6, T0, all)).toEqual(["a-cmd1", "b-cmd1", "a-cmd2", "b-cmd2", "a-sh1", "b-cmd3"]);
        expect(await pop(s.ready, "p", 10, T0, all)).toEqual(["a-sh2", "a-bash1", "a-bash2", "a-node1", "a-node2"]);
        expect(await s.ready.size("p")).toBe(0);
        // A take names a pool, not a script queue; a queue of an unknown interpreter is refused.
        await expect(s.ready.take("p:sh", 1, T0, 1_000, all)).rejects.toBeInstanceOf(RangeError);
        await expect(s.ready.push("p:ruby", runs("a", "rb", 1, 0))).rejects.toBeInstanceOf(RangeError);
      });

      it("a taker without an interpreter never gets its runs and is not held back by them; the turns stay shared", async () => {
        // "n" has only node scripts queued, and the lowest turn; "c" plain runs; "x" both.
        await s.ready.push("p:node", range(3).map((i) => ({ ownerId: "n", runId: `n${i + 1}`, priority: 5, enqueuedAt: T0 + i })));
        await s.ready.push("p:node", [{ ownerId: "x", runId: "x-node", priority: 9, enqueuedAt: T0 }]);
        await s.ready.push("p", [1, 2].map((i) => ({ ownerId: "x", runId: `x${i}`, priority: 5, enqueuedAt: T0 + i })));
        await s.ready.push("p", [1, 2].map((i) => ({ ownerId: "c", runId: `c${i}`, priority: 5, enqueuedAt: T0 + i })));
        await s.ready.push("p:python3", [{ ownerId: "c", runId: "c-py", priority: 5, enqueuedAt: T0 + 9, notBefore: T0 + 50 }]);
        // Without node: never n's runs nor x's node script; c and x alternate from the start.
        expect(await pop(s.ready, "p", 10, T0, ["sh", "python3"])).toEqual(["c1", "x1", "c2", "x2"]);
        expect(await pop(s.ready, "p", 10, T0, ["sh", "python3"])).toEqual([]);
        expect(await s.ready.contains("p:node", "n1", T0)).toBe(true);
        // The staged python3 run is promoted by a take that cannot run it, then taken by one that can.
        expect(await pop(s.ready, "p", 10, T0 + 50, [])).toEqual([]);
        expect(await s.ready.contains("p:python3", "c-py", T0 + 50)).toBe(true);
        // With node: n kept its turn (0), the lowest; x's turn moved on to 2 with its two plain runs,
        // the node script's too, so n gives three runs (the third tied with x, by owner) first.
        expect(await pop(s.ready, "p", 3, T0 + 50, ["node"])).toEqual(["n1", "n2", "n3"]);
        // c joined again at 2 when its staged run came due (the turn after the last taken): c, then x (ties by owner).
        expect(await pop(s.ready, "p", 10, T0 + 50, ["node", "python3"])).toEqual(["c-py", "x-node"]);
        expect(await s.ready.size("p")).toBe(0);
      });

      it("a turn left behind by runs no taker could start is no credit for runs of another interpreter", async () => {
        // "lag" queues node scripts that no taker so far can start: its turn stays at 0 while "busy" is served ten times.
        await s.ready.push("p:node", range(3).map((i) => ({ ownerId: "lag", runId: `lag-node${i + 1}`, priority: 5, enqueuedAt: T0 + i })));
        await s.ready.push("p", range(20).map((i) => ({ ownerId: "busy", runId: `b${String(i + 1).padStart(2, "0")}`, priority: 5, enqueuedAt: T0 + i })));
        expect(await pop(s.ready, "p", 10, T0, ["sh"])).toHaveLength(10);
        // Its commands join the turns where the others are (busy's, ties by owner), not ten turns ahead of them.
        await s.ready.push("p", range(3).map((i) => ({ ownerId: "lag", runId: `lag-cmd${i + 1}`, priority: 5, enqueuedAt: T0 + i })));
        expect(await pop(s.ready, "p", 4, T0, ["sh"])).toEqual(["b11", "lag-cmd1", "b12", "lag-cmd2"]);
        // Its node scripts' turn went up with it: a taker with node serves its runs (the oldest first,
        // whatever the queue) in turn with busy's commands.
        expect(await pop(s.ready, "p", 4, T0, ["node"])).toEqual(["b13", "lag-node1", "b14", "lag-node2"]);
      });

      it("an owner whose runs wait for a scarce interpreter is served within a round of that interpreter's owners", async () => {
        // "n" has node scripts only; takers without node serve "busy" ten times meanwhile.
        await s.ready.push("p:node", range(5).map((i) => ({ ownerId: "n", runId: `n${i + 1}`, priority: 5, enqueuedAt: T0 + i })));
        await s.ready.push("p", range(20).map((i) => ({ ownerId: "busy", runId: `b${String(i + 1).padStart(2, "0")}`, priority: 5, enqueuedAt: T0 + i })));
        expect(await pop(s.ready, "p", 10, T0, [])).toHaveLength(10);
        // A taker with node serves n first: its turn is the lowest (it could not be served before).
        expect(await pop(s.ready, "p", 2, T0, ["node"])).toEqual(["n1", "n2"]);
        // Another owner's node script joins just after n, not behind n's whole lag: served within a round of n.
        await s.ready.push("p:node", [{ ownerId: "v", runId: "v1", priority: 5, enqueuedAt: T0 }]);
        expect(await pop(s.ready, "p", 3, T0, ["node"])).toEqual(["n3", "n4", "v1"]);
        // Takers without node were not moved back by n's late turns: busy goes on, in turn with a newcomer.
        await s.ready.push("p", [{ ownerId: "c", runId: "c1", priority: 5, enqueuedAt: T0 }]);
        expect(await pop(s.ready, "p", 3, T0, [])).toEqual(["b11", "c1", "b12"]);
      });

      it("removes a script run from its queue; an owner whose last run of an interpreter goes leaves that interpreter's turns", async () => {
        await s.ready.push("p:sh", [{ ownerId: "a", runId: "a-sh", priority: 5, enqueuedAt: T0 }]);
        await s.ready.push("p", [{ ownerId: "a", runId: "a1", priority: 5, enqueuedAt: T0 + 1 }, { ownerId: "b", runId: "b1", priority: 5, enqueuedAt: T0 + 1 }]);
        expect(await s.ready.remove("p:sh", "a-sh")).toBe(true);
        expect(await s.ready.remove("p:sh", "a-sh")).toBe(false);
        expect(await pop(s.ready, "p", 10, T0, ["sh"])).toEqual(["a1", "b1"]);
        const wake = await record(s.bus, Channels.readyWake("p:bash"));
        try {
          await s.ready.push("p:bash", [{ ownerId: "a", runId: "a-bash", priority: 5, enqueuedAt: T0 }]);
          expect((await wake.next(1)).map((m) => JSON.parse(m))).toEqual([{ pool: "p:bash", count: 1 }]);
        } finally {
          await wake.stop();
        }
        const taken = await s.ready.take("p", 10, T0, 1_000, ["bash"]);
        expect(taken.taken.map((t) => t.runId)).toEqual(["a-bash"]);
      });

      it("matches a reference model of turns under random pushes to a pool's queues, takes by nodes with various interpreters, and removals", async () => {
        const owners = ["a", "b", "c"];
        // A plain run, or a script of two interpreters; a taker has some of them.
        const interpreters = ["", "sh", "node"];
        const takers = [[], ["sh"], ["node"], ["sh", "node"]];
        const op = fc.oneof(
          fc.record({ kind: fc.constant("push" as const), owner: fc.constantFrom(...owners), interpreter: fc.constantFrom(...interpreters), n: fc.integer({ min: 1, max: 4 }), priority: fc.integer({ min: 0, max: 2 }) }),
          fc.record({ kind: fc.constant("take" as const), max: fc.integer({ min: 0, max: 6 }), has: fc.constantFrom(...takers) }),
          fc.record({ kind: fc.constant("remove" as const), pick: fc.nat() }),
        );
        await fc.assert(
          fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
            const pool = `m${Math.random().toString(36).slice(2)}`;
            // The model: per owner its runs (any interpreter), best first; the owners with runs and
            // their turns (one per owner in the pool); the turn after the last taken (the highest so far).
            type Run = { runId: string; score: number; interpreter: string };
            const queued = new Map<string, Run[]>();
            const turns = new Map<string, number>();
            let last = 0;
            let serial = 0;
            for (const o of ops) {
              if (o.kind === "push") {
                const entries = range(o.n).map(() => ({ ownerId: o.owner, runId: `r${String(serial++).padStart(3, "0")}`, priority: o.priority, enqueuedAt: T0 + serial }));
                await s.ready.push(o.interpreter ? `${pool}:${o.interpreter}` : pool, entries);
                // An owner with no run of the interpreter queued joins at J = min(last, lowest turn of
                // the interpreter's owners + 1); one queued already keeps its turn if at least J, else J.
                const ofInterpreter = [...turns].filter(([owner]) => queued.get(owner)!.some((r) => r.interpreter === o.interpreter));
                if (!ofInterpreter.some(([owner]) => owner === o.owner)) {
                  const j = Math.min(last, ...ofInterpreter.map(([, t]) => t + 1));
                  turns.set(o.owner, Math.max(turns.get(o.owner) ?? -Infinity, j));
                }
                const q = queued.get(o.owner) ?? [];
                q.push(...entries.map((e) => ({ runId: e.runId, score: (9 - e.priority) * 1e13 + e.enqueuedAt, interpreter: o.interpreter })));
                q.sort((x, y) => x.score - y.score || (x.runId < y.runId ? -1 : 1));
                queued.set(o.owner, q);
              } else if (o.kind === "take") {
                const can = (r: Run) => r.interpreter === "" || o.has.includes(r.interpreter);
                const expected: string[] = [];
                while (expected.length < o.max) {
                  // Of the owners with a run this taker can start: the lowest turn, ties by owner; its best such run.
                  const eligible = [...turns].filter(([owner]) => queued.get(owner)!.some(can));
                  if (eligible.length === 0) break;
                  const [owner, at] = eligible.sort(([a, x], [b, y]) => x - y || (a < b ? -1 : 1))[0]!;
                  const q = queued.get(owner)!;
                  const i = q.findIndex(can);
                  expected.push(q.splice(i, 1)[0]!.runId);
                  // Never back: an owner served late does not move the newcomers' turn back.
                  last = Math.max(last, at + 1);
                  if (q.length > 0) turns.set(owner, at + 1);
                  else {
                    turns.delete(owner);
                    queued.delete(owner);
                  }
                }
                expect(await pop(s.ready, pool, o.max, T0 + 1_000, o.has)).toEqual(expected);
              } else {
                const all = [...queued].flatMap(([owner, q]) => q.map((r) => ({ owner, runId: r.runId, interpreter: r.interpreter })));
                const victim = all.length > 0 ? all[o.pick % all.length]! : null;
                const queue = victim?.interpreter ? `${pool}:${victim.interpreter}` : pool;
                expect(await s.ready.remove(queue, victim?.runId ?? "none")).toBe(victim !== null);
                if (victim) {
                  const q = queued.get(victim.owner)!.filter((r) => r.runId !== victim.runId);
                  if (q.length > 0) queued.set(victim.owner, q);
                  else {
                    queued.delete(victim.owner);
                    turns.delete(victim.owner);
                  }
                }
              }
            }
            expect(await s.ready.size(pool)).toBe([...queued.values()].reduce((n, q) => n + q.length, 0));
            // Everything left is taken by a taker with every interpreter, in the model's order too.
            const rest: string[] = [];
            while (turns.size > 0) {
              const [owner, at] = [...turns].sort(([a, x], [b, y]) => x - y || (a < b ? -1 : 1))[0]!;
              const q = queued.get(owner)!;
              rest.push(q.shift()!.runId);
              if (q.length > 0) turns.set(owner, at + 1);
              else {
                turns.delete(owner);
                queued.delete(owner);
              }
            }
            expect(await pop(s.ready, pool, 1_000, T0 + 1_000, ["sh", "node"])).toEqual(rest);
          }),
          { numRuns: 100 },
        );
      });

      it("refuses an entry without an owner before writing any", async () => {
        await expect(s.ready.push("p", [{ ownerId: "u", runId: "ok", priority: 1, enqueuedAt: T0 }, { ownerId: "", runId: "anon", priority: 1, enqueuedAt: T0 }])).rejects.toBeInstanceOf(RangeError);
        await expect(s.ready.push("p", [{ ownerId: "a\0b", runId: "nul", priority: 1, enqueuedAt: T0 }])).rejects.toBeInstanceOf(RangeError);
        expect(await s.ready.size("p")).toBe(0);
      });

      it("push is idempotent per runId: a re-push keeps the first position", async () => {
        await s.ready.push("p", [
          { ownerId: "u", runId: "r1", priority: 1, enqueuedAt: T0 },
          { ownerId: "u", runId: "r2", priority: 5, enqueuedAt: T0 + 1 },
        ]);
        await s.ready.push("p", [
          { ownerId: "u", runId: "r1", priority: 9, enqueuedAt: T0 + 2 },
          { ownerId: "u", runId: "r1", priority: 9, enqueuedAt: T0 + 3 },
        ]);
        expect(await s.ready.size("p")).toBe(2);
        expect(await pop(s.ready, "p", 10, T0)).toEqual(["r2", "r1"]);
      });

      it("remove, contains and size; pools are independent", async () => {
        await s.ready.push("gpu", [{ ownerId: "u", runId: "r1", priority: 3, enqueuedAt: T0 }]);
        await s.ready.push("cpu", [
          { ownerId: "u", runId: "r1", priority: 3, enqueuedAt: T0 },
          { ownerId: "u", runId: "r2", priority: 3, enqueuedAt: T0 },
        ]);
        expect(await s.ready.contains("gpu", "r1", T0)).toBe(true);
        expect(await s.ready.contains("gpu", "r2", T0)).toBe(false);
        expect(await s.ready.size("cpu")).toBe(2);
        expect(await s.ready.remove("cpu", "r1")).toBe(true);
        expect(await s.ready.remove("cpu", "r1")).toBe(false);
        expect(await s.ready.contains("cpu", "r1", T0)).toBe(false);
        expect(await s.ready.size("cpu")).toBe(1);
        expect(await s.ready.size("gpu")).toBe(1);
        expect(await s.ready.size("none")).toBe(0);
        expect(await pop(s.ready, "cpu", 0, T0)).toEqual([]);
        expect(await s.ready.size("cpu")).toBe(1);
      });

      it("rejects priorities and enqueue times the score cannot hold, without storing anything", async () => {
        for (const bad of [
          { ownerId: "u", runId: "p10", priority: 10, enqueuedAt: T0 },
          { ownerId: "u", runId: "pneg", priority: -1, enqueuedAt: T0 },
          { ownerId: "u", runId: "pfrac", priority: 1.5, enqueuedAt: T0 },
          { ownerId: "u", runId: "tneg", priority: 1, enqueuedAt: -1 },
          { ownerId: "u", runId: "tbig", priority: 1, enqueuedAt: 1e13 },
        ]) {
          await expect(s.ready.push("p", [{ ownerId: "u", runId: "ok", priority: 1, enqueuedAt: T0 }, bad])).rejects.toBeInstanceOf(RangeError);
        }
        expect(await s.ready.size("p")).toBe(0);
        await expect(s.ready.take("p", -1, T0, 0)).rejects.toBeInstanceOf(RangeError);
      });

      it("push publishes a wake-up with the number of new entries", async () => {
        const wake = await record(s.bus, Channels.readyWake("gpu"));
        try {
          await s.ready.push("gpu", [
            { ownerId: "u", runId: "r1", priority: 1, enqueuedAt: T0 },
            { ownerId: "u", runId: "r2", priority: 1, enqueuedAt: T0 },
          ]);
          await s.ready.push("gpu", [{ ownerId: "u", runId: "r1", priority: 1, enqueuedAt: T0 }]); // nothing new: no wake
          await s.ready.push("gpu", [
            { ownerId: "u", runId: "r2", priority: 1, enqueuedAt: T0 },
            { ownerId: "u", runId: "r3", priority: 1, enqueuedAt: T0 },
          ]);
          const msgs = await wake.next(2);
          expect(msgs.map((m) => JSON.parse(m))).toEqual([
            { pool: "gpu", count: 2 },
            { pool: "gpu", count: 1 },
          ]);
        } finally {
          await wake.stop();
        }
      });

      it("staged entries are taken only from their notBefore, then by priority and enqueue time; nextAt names the earliest", async () => {
        await s.ready.push("p", [
          { ownerId: "u", runId: "now-low", priority: 1, enqueuedAt: T0 },
          { ownerId: "u", runId: "later-high", priority: 9, enqueuedAt: T0 + 5_000, notBefore: T0 + 5_000 },
          { ownerId: "u", runId: "later-low", priority: 1, enqueuedAt: T0 + 3_000, notBefore: T0 + 3_000 },
        ]);
        expect(await s.ready.size("p")).toBe(3);
        expect(await s.ready.contains("p", "later-high", T0)).toBe(true);
        expect(await s.ready.take("p", 10, T0, 1_000)).toEqual({ taken: [{ runId: "now-low", payload: null }], nextAt: T0 + 3_000 });
        expect(await s.ready.take("p", 10, T0 + 2_999, 1_000)).toEqual({ taken: [], nextAt: T0 + 3_000 });
        // Both due: the higher priority first, though staged for later.
        await s.ready.push("p", [{ ownerId: "u", runId: "fresh-low", priority: 1, enqueuedAt: T0 + 1_000 }]);
        expect(await pop(s.ready, "p", 1, T0 + 6_000)).toEqual(["later-high"]);
        expect(await s.ready.take("p", 10, T0 + 6_000, 1_000)).toEqual({
          taken: [
            { runId: "fresh-low", payload: null },
            { runId: "later-low", payload: null },
          ],
          nextAt: null,
        });
        expect(await s.ready.size("p")).toBe(0);
      });

      it("a staged entry can be removed before its time, and a re-push while staged keeps it staged", async () => {
        await s.ready.push("p", [{ ownerId: "u", runId: "s1", priority: 5, enqueuedAt: T0 + 10_000, notBefore: T0 + 10_000, payload: "first" }]);
        await s.ready.push("p", [{ ownerId: "u", runId: "s1", priority: 5, enqueuedAt: T0, payload: "second" }]);
        expect(await pop(s.ready, "p", 10, T0 + 1)).toEqual([]);
        expect((await s.ready.take("p", 10, T0 + 10_000, 1_000)).taken).toEqual([{ runId: "s1", payload: "first" }]);
        await s.ready.push("p", [{ ownerId: "u", runId: "s2", priority: 5, enqueuedAt: T0 + 10_000, notBefore: T0 + 10_000, payload: "x" }]);
        expect(await s.ready.remove("p", "s2")).toBe(true);
        expect(await s.ready.remove("p", "s2")).toBe(false);
        expect(await s.ready.contains("p", "s2", T0)).toBe(false);
        expect(await s.ready.take("p", 10, T0 + 20_000, 1_000)).toEqual({ taken: [], nextAt: null });
      });

      it("taking an entry with a payload leaves a claim marker until now + claimMs; one without leaves none", async () => {
        await s.ready.push("p", [
          { ownerId: "u", runId: "fast", priority: 5, enqueuedAt: T0, payload: '{"run":"fast|with a bar"}' },
          { ownerId: "u", runId: "slow", priority: 5, enqueuedAt: T0 + 1 },
        ]);
        expect(await s.ready.take("p", 10, T0, 5_000)).toEqual({
          taken: [
            { runId: "fast", payload: '{"run":"fast|with a bar"}' },
            { runId: "slow", payload: null },
          ],
          nextAt: null,
        });
        expect(await s.ready.contains("p", "fast", T0 + 4_999)).toBe(true);
        expect(await s.ready.contains("p", "fast", T0 + 5_000)).toBe(false);
        expect(await s.ready.contains("p", "slow", T0)).toBe(false);
        expect(await s.ready.claimExpiry("p", "fast")).toBe(T0 + 5_000);
        expect(await s.ready.claimExpiry("p", "slow")).toBeNull();
        // An expired marker is kept for claimMs more (a take drops older ones).
        await s.ready.take("p", 1, T0 + 9_999, 5_000);
        expect(await s.ready.claimExpiry("p", "fast")).toBe(T0 + 5_000);
        await s.ready.take("p", 1, T0 + 10_001, 5_000);
        expect(await s.ready.claimExpiry("p", "fast")).toBeNull();
        // The marker does not make the run takeable again, and a later push queues it anew.
        expect(await pop(s.ready, "p", 10, T0 + 1)).toEqual([]);
        await s.ready.push("p", [{ ownerId: "u", runId: "fast", priority: 5, enqueuedAt: T0 + 2 }]);
        expect(await s.ready.take("p", 10, T0 + 2, 5_000)).toEqual({ taken: [{ runId: "fast", payload: null }], nextAt: null });
        expect(await s.ready.remove("p", "fast")).toBe(false);
      });

      it("lists claim markers up to an instant, earliest first; drops each only up to its bound", async () => {
        await s.ready.push("m", [
          { ownerId: "u", runId: "a", priority: 5, enqueuedAt: T0, payload: "{}" },
          { ownerId: "u", runId: "b", priority: 5, enqueuedAt: T0 + 1, payload: "{}" },
        ]);
        await s.ready.take("m", 1, T0, 5_000); // a: until T0 + 5,000
        await s.ready.take("m", 1, T0 + 100, 5_000); // b: until T0 + 5,100
        expect(await s.ready.claimMarkers("m", T0 + 5_000, 10)).toEqual([{ runId: "a", expiresAt: T0 + 5_000 }]);
        expect(await s.ready.claimMarkers("m", T0 + 6_000, 10)).toEqual([
          { runId: "a", expiresAt: T0 + 5_000 },
          { runId: "b", expiresAt: T0 + 5_100 },
        ]);
        expect(await s.ready.claimMarkers("m", T0 + 6_000, 1)).toEqual([{ runId: "a", expiresAt: T0 + 5_000 }]);
        expect(await s.ready.claimMarkers("other", T0 + 6_000, 10)).toEqual([]);
        // A bound before the marker's expiry leaves it (a newer taker's marker); one at or after drops it.
        await s.ready.dropClaims("m", [
          { runId: "a", expiresAt: T0 + 4_999 },
          { runId: "b", expiresAt: T0 + 5_100 },
          { runId: "none", expiresAt: T0 + 9_000 },
        ]);
        expect(await s.ready.claimMarkers("m", T0 + 6_000, 10)).toEqual([{ runId: "a", expiresAt: T0 + 5_000 }]);
        await s.ready.dropClaims("m", [{ runId: "a", expiresAt: T0 + 5_000 }]);
        expect(await s.ready.claimMarkers("m", T0 + 6_000, 10)).toEqual([]);
        expect(await s.ready.claimExpiry("m", "a")).toBeNull();
        await s.ready.dropClaims("m", []);
        // Restored markers (after a store loss) never replace one that is there.
        await s.ready.push("m", [{ ownerId: "u", runId: "c", priority: 5, enqueuedAt: T0 + 2, payload: "{}" }]);
        await s.ready.take("m", 1, T0 + 200, 5_000); // c: until T0 + 5,200
        await s.ready.restoreClaims("m", [
          { runId: "a", expiresAt: T0 + 7_000 },
          { runId: "c", expiresAt: T0 + 9_000 },
        ]);
        expect(await s.ready.claimMarkers("m", T0 + 10_000, 10)).toEqual([
          { runId: "c", expiresAt: T0 + 5_200 },
          { runId: "a", expiresAt: T0 + 7_000 },
        ]);
        expect(await s.ready.contains("m", "a", T0 + 6_999)).toBe(true);
        await s.ready.restoreClaims("m", []);
      });

      it("a push that stages entries says from when in its wake-up", async () => {
        const wake = await record(s.bus, Channels.readyWake("gpu"));
        try {
          await s.ready.push("gpu", [
            { ownerId: "u", runId: "a", priority: 1, enqueuedAt: T0 + 900, notBefore: T0 + 900 },
            { ownerId: "u", runId: "b", priority: 1, enqueuedAt: T0 + 700, notBefore: T0 + 700 },
          ]);
          expect((await wake.next(1)).map((m) => JSON.parse(m))).toEqual([{ pool: "gpu", count: 2, at: T0 + 700 }]);
        } finally {
          await wake.stop();
        }
      });

      it("remembers since when its data is intact: the first caller's now", async () => {
        expect(await s.ready.intactSince(T0 + 5)).toBe(T0 + 5);
        expect(await s.ready.intactSince(T0 + 9_000)).toBe(T0 + 5);
      });

      it("keeps the set of owners with a concurrency limit", async () => {
        expect(await s.ready.limitedAmong(["u1", "u2"])).toEqual(new Set());
        expect(await s.ready.anyLimited()).toBe(false);
        await s.ready.markLimited("u1", true);
        await s.ready.markLimited("u2", true);
        await s.ready.markLimited("u2", false);
        expect(await s.ready.anyLimited()).toBe(true);
        expect(await s.ready.limitedAmong(["u1", "u2", "u3"])).toEqual(new Set(["u1"]));
        await s.ready.markLimited("u1", false);
        expect(await s.ready.anyLimited()).toBe(false);
        await s.ready.replaceLimited(["u3", "u4"]);
        expect(await s.ready.anyLimited()).toBe(true);
        expect(await s.ready.limitedAmong(["u1", "u3", "u4"])).toEqual(new Set(["u3", "u4"]));
        await s.ready.replaceLimited([]);
        expect(await s.ready.anyLimited()).toBe(false);
        expect(await s.ready.limitedAmong(["u3"])).toEqual(new Set());
        expect(await s.ready.limitedAmong([])).toEqual(new Set());
      });
    });

    describe("event bus", () => {
      it("fans out to every handler, across clients, until each unsubscribes", async () => {
        const other = await d.peer();
        const got1: string[] = [];
        const got2: string[] = [];
        const un1 = await s.bus.subscribe("test:chan", (m) => got1.push(m));
        const un2 = await s.bus.subscribe("test:chan", (m) => got1.push(`again:${m}`));
        const un3 = await other.bus.subscribe("test:chan", (m) => got2.push(m));
        // Per client, handlers run in subscription order for each message, so once these tails
        // (subscribed last) have a message, every earlier handler of the same client has it too.
        const tailS = await record(s.bus, "test:chan");
        const tailOther = await record(other.bus, "test:chan");
        const delivered = (n: number) => Promise.all([tailS.next(n), tailOther.next(n)]);

        await other.bus.publish("test:chan", "one");
        await delivered(1);
        await un1();
        await s.bus.publish("test:chan", "two");
        await delivered(2);
        await un2();
        await un3();
        await s.bus.publish("test:chan", "three");
        await delivered(3);
        await Promise.all([tailS.stop(), tailOther.stop()]);

        expect(got1.sort()).toEqual(["again:one", "again:two", "one"]);
        expect(got2).toEqual(["one", "two"]);
        expect(tailS.messages).toEqual(["one", "two", "three"]);
      });

      it("delivers asynchronously and isolates a throwing handler", async () => {
        let ran = false;
        const unThrow = await s.bus.subscribe("test:async", () => {
          ran = true;
          throw new Error("handler bug");
        });
        const rec = await record(s.bus, "test:async");
        const published = s.bus.publish("test:async", "x");
        expect(ran).toBe(false); // never inside the publisher's call stack
        await published;
        expect(await rec.next(1)).toEqual(["x"]);
        expect(ran).toBe(true);
        await rec.stop();
        await unThrow();
      });

      it("keeps channels apart", async () => {
        const a = await record(s.bus, "test:a");
        const b = await record(s.bus, "test:b");
        await s.bus.publish("test:b", "for-b");
        await s.bus.publish("test:a", "for-a");
        expect(await a.next(1)).toEqual(["for-a"]);
        expect(await b.next(1)).toEqual(["for-b"]);
        await Promise.all([a.stop(), b.stop()]);
      });
    });

    describe("concurrency", () => {
      it("concurrent claimDue loops of one owner never return a timer twice", async () => {
        const shard = 6;
        const f = await own(shard);
        const timers = 600;
        await Promise.all(range(timers).map((i) => s.wheel.arm(shard, `j:${i}`, T0 - (i % 37))));
        const loops = await Promise.all(range(6).map(() => d.peer()));
        const claimed = await Promise.all(
          loops.map(async (peer) => {
            const mine: string[] = [];
            for (;;) {
              const batch = await peer.wheel.claimDue(f, T0, 7, 60_000);
              if (batch.length === 0) return mine;
              mine.push(...batch.map((t) => t.id));
            }
          }),
        );
        const all = claimed.flat();
        expect(all).toHaveLength(timers);
        expect(new Set(all).size).toBe(timers);
        expect(await s.wheel.size(shard)).toEqual({ armed: 0, inflight: timers });
      });

      it("8 concurrent poppers take each of 2,000 ready entries exactly once, each in queue order", async () => {
        // A third of them staged (due by the time the poppers start): promoted once, in the same order.
        const entries = range(2_000).map((i) => ({
          ownerId: "u",
          runId: `run-${String(i).padStart(4, "0")}`,
          priority: (i * 7) % 10,
          enqueuedAt: T0 + (i % 101),
          ...(i % 3 === 0 ? { notBefore: T0 + (i % 101), payload: `p${i}` } : {}),
        }));
        for (let i = 0; i < entries.length; i += 250) await s.ready.push("pool", entries.slice(i, i + 250));
        const rank = new Map(
          [...entries]
            .sort((a, b) => b.priority - a.priority || a.enqueuedAt - b.enqueuedAt || (a.runId < b.runId ? -1 : 1))
            .map((e, i) => [e.runId, i]),
        );
        const poppers = await Promise.all(range(8).map(() => d.peer()));
        const got = await Promise.all(
          poppers.map(async (peer) => {
            const mine: string[] = [];
            for (;;) {
              const batch = await pop(peer.ready, "pool", 13, T0 + 1_000);
              if (batch.length === 0) return mine;
              mine.push(...batch);
            }
          }),
        );
        const all = got.flat();
        expect(all).toHaveLength(entries.length);
        expect(new Set(all).size).toBe(entries.length);
        // Pops are atomic takes from the head of one global order, so each popper sees a rising rank.
        for (const mine of got) {
          const ranks = mine.map((id) => rank.get(id)!);
          expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
        }
        expect(await s.ready.size("pool")).toBe(0);
      });
    });
  });
}
