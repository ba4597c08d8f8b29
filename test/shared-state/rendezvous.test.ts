import { describe, expect, it } from "vitest";
import { rendezvousOwner, shardOf } from "../../src/shared-state/ports.js";
import { range } from "./helpers.js";

const SHARDS = 64;
const NAMING = [
  ["a", "b", "c"],
  ["sched-1", "sched-2", "sched-3"],
  ["scheduler-0", "scheduler-1", "scheduler-2"],
  ["host-a:1234", "host-b:1234", "host-c:1234"],
  ["10.0.0.7:4100:8812", "10.0.0.8:4100:8812", "10.0.0.9:4100:1203"],
];

function owners(members: readonly string[]): (string | null)[] {
  return range(SHARDS).map((s) => rendezvousOwner(s, members));
}

describe("rendezvousOwner", () => {
  it.each(NAMING)("a third member %s.. takes about a third of the shards, all moved to it", (...members) => {
    const before = owners(members.slice(0, 2));
    const after = owners(members);
    const moved = range(SHARDS).filter((s) => before[s] !== after[s]);
    expect(moved.length).toBeGreaterThanOrEqual(15);
    expect(moved.length).toBeLessThanOrEqual(30);
    for (const s of moved) expect(after[s]).toBe(members[2]);
    // Nobody is starved: each of three members owns a fair share.
    for (const m of members) expect(after.filter((o) => o === m).length).toBeGreaterThanOrEqual(12);
  });

  it.each(NAMING)("removing member %s moves only its own shards", (...members) => {
    const before = owners(members);
    for (const gone of members) {
      const after = owners(members.filter((m) => m !== gone));
      for (const s of range(SHARDS)) {
        if (before[s] === gone) expect(after[s]).not.toBe(gone);
        else expect(after[s]).toBe(before[s]);
      }
    }
  });

  it("is independent of member order and has no owner without members", () => {
    const members = ["x", "y", "z", "w"];
    expect(owners(members)).toEqual(owners([...members].reverse()));
    expect(rendezvousOwner(0, [])).toBeNull();
  });
});

describe("shardOf", () => {
  it("spreads ObjectId-like job ids evenly over 64 shards", () => {
    const counts = new Array<number>(SHARDS).fill(0);
    for (const i of range(64_000)) counts[shardOf((0x65a1b2c3d4e5f6 + i * 7919).toString(16).padStart(24, "0"), SHARDS)]!++;
    expect(Math.min(...counts)).toBeGreaterThan(800);
    expect(Math.max(...counts)).toBeLessThan(1_200);
  });
});
