import { describe, expect, it } from "vitest";
import { dstSkipKey, fireKey } from "../../src/domain/fire-keys.js";
import { ledgerProblems } from "../../src/timing/index.js";

// The examples of the former accountSlots are in decide-fire.test.ts, run through the production decision.

describe("ledgerProblems", () => {
  it("finds slots with no outcome, two outcomes, or outcomes for foreign slots", () => {
    const slots = [{ at: 1 }, { at: 2 }, { at: 3 }];
    const e = (at: number) => ({ key: fireKey("j", at), slotAt: at, outcome: "FIRED" as const, reason: "" });
    expect(ledgerProblems("j", slots, [e(1), e(2), e(3)])).toEqual([]);
    expect(ledgerProblems("j", slots, [e(1), e(2), e(2), e(4)])).toEqual(["j@2: 2 outcomes", "j@3: 0 outcomes", "j@4: outcome for a slot outside the window"]);
  });
  it("a summary entry stands for every slot of its range, and only for those", () => {
    const slots = [1, 2, 3, 4, 5].map((at) => ({ at }));
    const one = (at: number) => ({ key: fireKey("j", at) });
    const summary = (a: number, b: number) => ({ key: fireKey("j", b), covers: { afterExclusive: a, throughInclusive: b } });
    expect(ledgerProblems("j", slots, [one(1), summary(1, 4), one(5)])).toEqual([]);
    // Its key is the range end's: not an outcome for a slot outside the window, even when that is no slot.
    expect(ledgerProblems("j", slots, [one(1), summary(1, 4.5), one(5)])).toEqual([]);
    expect(ledgerProblems("j", slots, [one(1), summary(1, 3), one(5)])).toEqual(["j@4: 0 outcomes"]);
    expect(ledgerProblems("j", slots, [one(1), summary(1, 4), one(4), one(5)])).toEqual(["j@4: 2 outcomes", "j@4: 2 entries under one key"]);
  });
  it("DST-skip keys are not slots, but are written once", () => {
    const slots = [{ at: 1 }];
    const dst = { key: dstSkipKey("j", 1) };
    expect(ledgerProblems("j", slots, [{ key: fireKey("j", 1) }, dst])).toEqual([]);
    expect(ledgerProblems("j", slots, [{ key: fireKey("j", 1) }, dst, dst])).toEqual(["j@1:dst: 2 outcomes"]);
  });
});
