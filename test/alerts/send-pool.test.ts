/** SendPool (src/core/alerts/send-pool.ts): the caps on calls in flight and the turn across owners. */
import { describe, expect, it } from "vitest";
import { AlertDeliveryStatus, type AlertDeliveryDoc } from "../../src/domain/index.js";
import { SendPool } from "../../src/core/alerts/send-pool.js";
import type { AlertSender } from "../../src/core/alerts/sender.js";

const log = { warn: () => undefined, error: () => undefined, info: () => undefined, debug: () => undefined } as never;
const d = (id: string, ownerId: string, ruleId: string) => ({ _id: id, ownerId, ruleId, status: AlertDeliveryStatus.PENDING }) as AlertDeliveryDoc;

function hangingSender() {
  const started: string[] = [];
  const release: Array<() => void> = [];
  const sender = {
    attempt: (x: AlertDeliveryDoc) => {
      started.push(x._id);
      return new Promise<null>((r) => release.push(() => r(null)));
    },
  } as unknown as AlertSender;
  return { sender, started, releaseAll: () => release.splice(0).forEach((f) => f()) };
}

describe("the send pool", () => {
  it("takes owners in turn and holds each owner, rule and the whole pool to its cap", async () => {
    const s = hangingSender();
    const pool = new SendPool({ sender: s.sender, log }, { maxInFlight: 6, perOwner: 3, perRule: 1 });
    const alice = Array.from({ length: 10 }, (_, i) => d(`a${i}`, "alice", `ra${i}`));
    const due = [...alice, d("b0", "bob", "rb"), d("b1", "bob", "rb"), d("c0", "carol", "rc0")];
    expect(pool.start(due)).toBe(5);
    // One of each owner first; Alice to her cap of 3; Bob's second waits for his rule's first.
    expect(s.started).toEqual(["a0", "b0", "c0", "a1", "a2"]);
    expect(pool.fullOwners()).toEqual(["alice"]);
    expect(pool.start(due)).toBe(0); // nothing already in flight starts again, no cap has room
    s.releaseAll();
    await pool.drain();
    // Then Bob's second in turn with Alice's next, Alice again to her cap (Carol has nothing left).
    expect(pool.start(due.filter((x) => !s.started.includes(x._id)))).toBe(4);
    expect(s.started.slice(5)).toEqual(["a3", "b1", "a4", "a5"]);
    s.releaseAll();
    await pool.drain();
    const small = new SendPool({ sender: s.sender, log }, { maxInFlight: 2, perOwner: 3, perRule: 1 });
    expect(small.start(due)).toBe(2);
    expect(small.full()).toBe(true);
    s.releaseAll();
    await small.drain();
  });
});
