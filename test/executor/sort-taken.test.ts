/** What a take from the ready queue brought (executor/pull-loop.ts sortTaken): started from its payload, or claimed in MongoDB. */
import { describe, expect, it } from "vitest";
import { encodeRunPayload } from "../../src/core/events.js";
import { sortTaken } from "../../src/executor/pull-loop.js";
import { silentLogger } from "../../src/support/log.js";
import { queuedRunDoc } from "../helpers/runs.js";

describe("sortTaken", () => {
  it("starts entries from a readable payload and claims the rest in MongoDB, in order", () => {
    const a = queuedRunDoc("u1");
    const b = queuedRunDoc("u2");
    const out = sortTaken(
      [
        { runId: a._id, payload: encodeRunPayload(a) },
        { runId: "limited-owner", payload: null },
        { runId: "garbled", payload: "{not json" },
        { runId: "no-spec", payload: JSON.stringify({ _id: "no-spec", fencingToken: 1 }) },
        { runId: b._id, payload: encodeRunPayload(b) },
      ],
      silentLogger(),
    );
    expect(out.withPayload.map((t) => [t.run._id, t.run.fencingToken, t.run.spec.command])).toEqual([
      [a._id, 3, "true"],
      [b._id, 3, "true"],
    ]);
    expect(out.withPayload[0]!.payload).toBe(encodeRunPayload(a));
    expect(out.inMongo).toEqual(["limited-owner", "garbled", "no-spec"]);
  });
});
