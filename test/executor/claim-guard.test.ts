/**
 * The executor's claim guard (src/executor/claim-guard.ts): when the shared store's generation
 * changes (Redis lost its data), the claim markers of the runs this executor took and has not
 * confirmed yet are written back, each until the attempt's kill deadline, so the schedulers'
 * rebuild (which skips runs under a marker) does not hand them to another executor. Confirmed,
 * refused and stopped attempts get none; an existing marker is never replaced.
 */
import { describe, expect, it } from "vitest";
import { encodeRunPayload } from "../../src/core/events.js";
import { newAttempt, type Attempt, type Claim } from "../../src/executor/attempt.js";
import { ClaimGuard } from "../../src/executor/claim-guard.js";
import { MemoryEventBus } from "../../src/shared-state/memory/event-bus.js";
import { MemoryReadyQueue } from "../../src/shared-state/memory/ready-queue.js";
import type { SharedState } from "../../src/shared-state/ports.js";
import { silentLogger } from "../../src/support/log.js";
import { queuedRunDoc } from "../helpers/runs.js";

const T0 = Date.parse("2026-11-23T12:00:00Z");
const RES = { cpu: 1, memoryMb: 256, pids: 64, diskMb: 100 };

function attempt(claim: Claim, killAt: number, runId: string): Attempt {
  return newAttempt(runId, 4, claim, RES, 0, killAt);
}

describe("the claim guard", () => {
  it("restores the markers of unconfirmed takes when the store's generation changes, and only then", async () => {
    const ready = new MemoryReadyQueue(new MemoryEventBus(() => {}));
    let generation = "g1";
    const state = { coordinator: { generation: async () => generation }, ready } as unknown as SharedState;
    const queued = queuedRunDoc("u1", { pool: "p" });
    const confirming = queuedRunDoc("u1", { pool: "p" });
    const ended = queuedRunDoc("u1", { pool: "p:python3" });
    const confirmed = queuedRunDoc("u1", { pool: "p" });
    const refused = queuedRunDoc("u1", { pool: "p" });
    const attempts = new Map<string, Attempt>([
      [queued._id, attempt({ state: "queued", run: queued, payload: encodeRunPayload(queued), startedAt: T0 }, T0 + 27_000, queued._id)],
      [confirming._id, attempt({ state: "confirming", run: confirming, confirmation: new Promise(() => {}) }, T0 + 27_100, confirming._id)],
      [ended._id, attempt({ state: "withResult", payload: encodeRunPayload(ended), startedAt: T0 }, T0 + 27_200, ended._id)],
      [confirmed._id, attempt({ state: "confirmed", run: { ...confirmed, status: "RUNNING" } }, T0 + 27_300, confirmed._id)],
      [refused._id, attempt({ state: "queued", run: refused, payload: encodeRunPayload(refused), startedAt: T0 }, T0 + 27_400, refused._id)],
    ]);
    attempts.get(refused._id)!.stop = "CLAIM_LOST";
    // A newer taker's marker for one of them is there already: it stays.
    await ready.restoreClaims("p", [{ runId: confirming._id, expiresAt: T0 + 50_000 }]);
    const guard = new ClaimGuard({ state, attempts, clock: () => T0, log: silentLogger() });

    expect(await guard.check()).toBe(0); // the first read only learns the generation
    expect(await guard.check()).toBe(0);
    expect(await ready.claimMarkers("p", Infinity, 10)).toEqual([{ runId: confirming._id, expiresAt: T0 + 50_000 }]);

    generation = "g2"; // the store lost its data
    expect(await guard.check()).toBe(3);
    // A pool's script queues keep their markers with the pool's (one set per pool, whichever queue name reads it).
    const markers = [
      { runId: queued._id, expiresAt: T0 + 27_000 },
      { runId: ended._id, expiresAt: T0 + 27_200 },
      { runId: confirming._id, expiresAt: T0 + 50_000 },
    ];
    expect(await ready.claimMarkers("p", Infinity, 10)).toEqual(markers);
    expect(await ready.claimMarkers("p:python3", Infinity, 10)).toEqual(markers);
    expect(await ready.claimExpiry("p:python3", ended._id)).toBe(T0 + 27_200);
    expect(await ready.contains("p", queued._id, T0 + 26_999)).toBe(true);
    expect(await guard.check()).toBe(0); // same generation again: nothing more
  });

  it("a failed read of the generation is logged and changes nothing", async () => {
    const ready = new MemoryReadyQueue(new MemoryEventBus(() => {}));
    const state = {
      coordinator: {
        generation: async () => {
          throw new Error("redis down");
        },
      },
      ready,
    } as unknown as SharedState;
    const guard = new ClaimGuard({ state, attempts: new Map(), clock: () => T0, log: silentLogger() });
    expect(await guard.check()).toBe(0);
  });
});
