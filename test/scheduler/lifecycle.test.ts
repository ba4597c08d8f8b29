import { describe, expect, it } from "vitest";
import { InvalidTransitionError } from "../../src/domain/errors.js";
import { RunStatus, TERMINAL_STATUSES, assertTransition, canTransition, sourcesOf } from "../../src/domain/lifecycle.js";

describe("run lifecycle table", () => {
  it("allows the documented path and refuses the rest with both states named", () => {
    expect(canTransition("PENDING", "QUEUED")).toBe(true);
    expect(canTransition("QUEUED", "RUNNING")).toBe(true);
    expect(canTransition("RUNNING", "RETRY_SCHEDULED")).toBe(true);
    expect(canTransition("RETRY_SCHEDULED", "QUEUED")).toBe(true);
    expect(canTransition("SUCCEEDED", "QUEUED")).toBe(false);
    expect(canTransition("PENDING", "RUNNING")).toBe(false);
    expect(() => assertTransition("r1", "SUCCEEDED", "RUNNING")).toThrow(InvalidTransitionError);
    expect(() => assertTransition("r1", "SUCCEEDED", "RUNNING")).toThrow("run r1 cannot go from SUCCEEDED to RUNNING");
  });

  it("never leaves SUCCEEDED and reaches RUNNING only from QUEUED", () => {
    expect(Object.values(RunStatus).filter((to) => canTransition("SUCCEEDED", to))).toEqual([]);
    expect(sourcesOf("RUNNING")).toEqual(["QUEUED"]);
    for (const t of TERMINAL_STATUSES) expect(canTransition(t, "RUNNING")).toBe(false);
  });
});
