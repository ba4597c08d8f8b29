/**
 * The write of a run transition (store/runs/transitions.ts): its filter, its update, and the
 * document that update produces from a known copy. The shapes are what the indexes and the
 * fencing rely on.
 */
import { describe, expect, it } from "vitest";
import type { RunTransition } from "../../src/domain/documents.js";
import {
  HISTORY_LIMIT,
  applyTransition,
  claimedTransitionFilter,
  transitionFilter,
  transitionUpdate,
} from "../../src/store/runs/transitions.js";
import { queuedRunDoc } from "../helpers/runs.js";

const at = new Date(Date.UTC(2030, 0, 1));
const entry = (reason: string): RunTransition => ({ status: "RUNNING", at, reason, nodeId: "n1", attempt: null });

describe("transition filters", () => {
  it("match the run by id in a status it may leave, fenced by the token and extra conditions when given", () => {
    expect(transitionFilter("r1", ["QUEUED", "PENDING"], {})).toEqual({ _id: "r1", status: { $in: ["QUEUED", "PENDING"] } });
    expect(transitionFilter("r1", ["QUEUED"], { token: 0 })).toEqual({ _id: "r1", status: { $in: ["QUEUED"] }, fencingToken: 0 });
    const also = transitionFilter("r1", ["QUEUED"], { token: 3, also: { attempt: 2, heldByLimit: { $ne: true } } });
    expect(also).toEqual({ attempt: 2, heldByLimit: { $ne: true }, _id: "r1", status: { $in: ["QUEUED"] }, fencingToken: 3 });
    // `also` cannot widen the id or the statuses.
    expect(transitionFilter("r1", ["QUEUED"], { also: { _id: "other", status: "DEAD" } })).toEqual({ _id: "r1", status: { $in: ["QUEUED"] } });
  });

  it("for an unwritten claim, match the run exactly as it was enqueued", () => {
    const queued = queuedRunDoc("u1", { fencingToken: 5, attempt: 2 });
    expect(claimedTransitionFilter(queued._id, queued)).toEqual({ _id: queued._id, status: "QUEUED", fencingToken: 5, attempt: 2, heldByLimit: { $ne: true } });
  });
});

describe("transitionUpdate", () => {
  it("sets the fields, the status and updatedAt, pushes the entries capped, and bumps counters only when asked", () => {
    const e = entry("claimed");
    expect(transitionUpdate({ to: "RUNNING", now: at, set: { nodeId: "n1" }, entries: [e], inc: { fencingToken: 1 } })).toEqual({
      $set: { nodeId: "n1", status: "RUNNING", updatedAt: at },
      $push: { history: { $each: [e], $slice: -HISTORY_LIMIT } },
      $inc: { fencingToken: 1 },
    });
    expect(transitionUpdate({ to: "CANCELLED", now: at, entries: [e] })).not.toHaveProperty("$inc");
  });
});

describe("applyTransition", () => {
  it("produces what the update writes: fields, status, capped history, counters", () => {
    const run = queuedRunDoc("u1", { fencingToken: 2, attempt: 1, history: Array.from({ length: HISTORY_LIMIT }, (_, i) => entry(`old ${i}`)) });
    const next = applyTransition(run, { set: { nodeId: "n1" }, status: "RUNNING", updatedAt: at, entry: entry("new"), inc: { fencingToken: 1, attempt: 1 } });
    expect(next).toMatchObject({ nodeId: "n1", status: "RUNNING", updatedAt: at, fencingToken: 3, attempt: 2 });
    expect(next.history).toHaveLength(HISTORY_LIMIT);
    expect(next.history[0]!.reason).toBe("old 1");
    expect(next.history.at(-1)!.reason).toBe("new");
    expect(run.status).toBe("QUEUED");
  });
});
