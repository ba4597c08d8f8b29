/**
 * The reaper after a Redis data loss (chaos, session 11: `lease_overlaps=2` after a Redis restart).
 * A QUEUED run the reaper first saw missing before a loss, then taken by an executor just before a
 * second loss that wiped the taker's claim marker, must wait a whole claim grace from that loss
 * before it is pushed again: its taker restores its markers within that grace. It used to count
 * from when it was first seen missing, so it was pushed one pass after the loss and ran twice.
 */
import { describe, expect, it, vi } from "vitest";
import type { RunService } from "../../src/core/index.js";
import type { RunDoc } from "../../src/domain/index.js";
import { Reaper } from "../../src/scheduler/reaper.js";
import type { SharedState } from "../../src/shared-state/index.js";
import { silentLogger } from "../../src/support/log.js";
import { useEmulatedMongo } from "../helpers/mongo.js";

const db = useEmulatedMongo("reaper_after_loss");
const GRACE = 3_000;

describe("the reaper after a Redis data loss", () => {
  it("counts a run seen missing before a loss as missing from the loss, and pushes it only a claim grace after it", async () => {
    const t0 = Date.parse("2026-11-27T02:07:00Z");
    let now = t0;
    // What Redis says: the run is in no queue and has no claim marker; intact since `intactAt`.
    let intactAt = t0 - 1_000; // a FLUSHALL one second ago: not intact for a grace yet
    const ready = {
      intactSince: vi.fn(async () => intactAt),
      contains: vi.fn(async () => false),
      claimExpiry: vi.fn(async () => null),
    };
    const requeueTaken = vi.fn(async (_runId: string) => true);
    const reaper = new Reaper({
      mongo: db.mongo,
      state: { ready } as unknown as SharedState,
      runs: { requeueTaken } as unknown as RunService,
      clock: () => now,
      log: silentLogger(),
      shards: { has: () => false, ownsJob: () => true },
      nodeDeadMs: 60_000,
      claimGraceMs: GRACE,
      causeOf: () => "store_restarted" as never,
    });
    const queuedAt = new Date(t0 - 60_000);
    await db.mongo.c.runs.insertOne({ _id: "r1", jobId: "j1", ownerId: "u1", status: "QUEUED", pool: "default", queuedAt, createdAt: queuedAt, fencingToken: 0 } as unknown as RunDoc);

    // Pass 1: missing, Redis lost a second ago: remembered, not pushed.
    await reaper.requeueLost(now);
    expect(requeueTaken).not.toHaveBeenCalled();
    // Meanwhile the store-loss rebuild pushed it, an executor took it (a marker), and Redis was
    // restarted 2.5 s after pass 1, taking queue and marker with it.
    now = t0 + 2_500;
    intactAt = now;
    // Pass 2, 0.6 s after the restart (3.1 s after pass 1: past the grace counted from pass 1).
    now = t0 + 3_100;
    await reaper.requeueLost(now);
    expect(requeueTaken).not.toHaveBeenCalled();
    // The taker restores its marker within the grace; if it did not (it died), the grace from the loss ends and the run is pushed.
    now = intactAt + GRACE + 1;
    await reaper.requeueLost(now);
    expect(requeueTaken).toHaveBeenCalledTimes(1);
    expect(requeueTaken.mock.calls[0]![0]).toBe("r1");
  });
});
