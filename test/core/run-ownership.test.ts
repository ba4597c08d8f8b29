/**
 * Cancelling and retrying a run act for a principal: ownership is decided by auth/access.ts, and
 * another user's run is refused exactly like a missing one (NOT_FOUND, as NotYoursError so the
 * API logs it as a refused cross-tenant attempt), without touching it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/tokens.js";
import { RunService } from "../../src/core/runs/index.js";
import { NotFoundError, NotYoursError } from "../../src/domain/errors.js";
import { createLogger } from "../../src/support/log.js";
import { createMemorySharedState } from "../../src/shared-state/memory/index.js";
import type { Mongo } from "../../src/store/mongo.js";
import { useEmulatedMongo } from "../helpers/mongo.js";
import { insertQueuedRuns } from "../helpers/runs.js";

const store = useEmulatedMongo("run-ownership");
let mongo: Mongo;
let runs: RunService;
const state = createMemorySharedState({ shardCount: 2 });

const alice: Principal = { userId: "alice", username: "alice", role: "USER" };
const bob: Principal = { userId: "bob", username: "bob", role: "USER" };
const admin: Principal = { userId: "root", username: "root", role: "ADMIN" };

beforeAll(() => {
  mongo = store.mongo;
  runs = new RunService({ mongo, state, clock: Date.now, log: createLogger("silent") });
});

describe("cancel and retryRun for a principal", () => {
  it("refuse another user's run as NOT_FOUND and leave it alone", async () => {
    const [id] = await insertQueuedRuns(mongo, 1, "alice");
    await expect(runs.cancel(bob, id!, "by bob")).rejects.toBeInstanceOf(NotYoursError);
    await expect(runs.retryRun(bob, id!)).rejects.toBeInstanceOf(NotYoursError);
    expect((await runs.get(id!))!.status).toBe("QUEUED");
  });

  it("answer a missing run NOT_FOUND, the same way", async () => {
    const missing = runs.cancel(alice, "no-such-run", "x");
    await expect(missing).rejects.toBeInstanceOf(NotFoundError);
    await expect(missing).rejects.not.toBeInstanceOf(NotYoursError);
    await expect(runs.retryRun(alice, "no-such-run")).rejects.toThrow(new NotFoundError("run", "no-such-run").message);
  });

  it("let the owner, or an admin, cancel and retry", async () => {
    const [mine, theirs] = await insertQueuedRuns(mongo, 2, "alice");
    expect((await runs.cancel(alice, mine!, "by alice")).status).toBe("CANCELLED");
    expect((await runs.cancel(admin, theirs!, "by root")).status).toBe("CANCELLED");
    const retried = await runs.retryRun(alice, mine!);
    expect(retried).toMatchObject({ status: "QUEUED", attempt: 2 });
    expect(retried.history.at(-1)!.reason).toBe("retried by user");
  });

  it("cancelBySystem needs no principal (job or owner deleted)", async () => {
    const [id] = await insertQueuedRuns(mongo, 1, "alice");
    expect((await runs.cancelBySystem(id!, "owner deleted")).status).toBe("CANCELLED");
  });
});

describe("handBack (an executor shutting down)", () => {
  it("puts its RUNNING attempt back to QUEUED under its own token, in the ready queue, and refuses a stale token", async () => {
    const [id] = await insertQueuedRuns(mongo, 1, "alice");
    const [claimed] = await runs.claimMany([id!], "node-1", 30_000);
    expect(claimed).toMatchObject({ status: "RUNNING", nodeId: "node-1" });
    expect(await runs.handBack(id!, claimed!.fencingToken - 1, claimed!.attempt)).toBeNull();
    expect((await runs.get(id!))!.status).toBe("RUNNING");
    const back = await runs.handBack(id!, claimed!.fencingToken, claimed!.attempt);
    expect(back).toMatchObject({ status: "QUEUED", nodeId: null, leaseUntil: null, attempt: claimed!.attempt });
    expect(back!.history.at(-1)).toMatchObject({ status: "QUEUED", reason: "handed back: executor shut down", attempt: claimed!.attempt });
    expect(await state.ready.contains("default", id!, Date.now())).toBe(true);
  });
});
