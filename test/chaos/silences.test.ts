/** The chaos scenario's count of silence alerts (test/chaos/silences.ts), on hand-made inputs. */
import { describe, expect, it } from "vitest";
import { countSilences, SILENCE_TOLERANCE_MS, SILENT_FOR_MS, type ReceivedAlert } from "./silences.js";

const every = (from: number, to: number) => Array.from({ length: (to - from) / 1000 + 1 }, (_, i) => from + i * 1000);
const silent = (start: number): ReceivedAlert => ({ id: `r|silent:j@${start}`, event: "SCHEDULE_SILENT", at: new Date(start + SILENT_FOR_MS).toISOString() });
const resolved = (start: number, at: number): ReceivedAlert => ({ id: `r|resolved:j@${start}`, event: "SCHEDULE_SILENT_RESOLVED", at: new Date(at).toISOString() });
// Successes every second, then none from 10 s to 50 s (a 40 s silence), then every second again up to the count.
const succeeding = (until: number) => [...every(1_000, 10_000), ...every(50_000, until)];
const now = 100_000;
const successes = succeeding(now);

describe("countSilences", () => {
  it("a long gap received once and its end resolved: clean", () => {
    const a = countSilences({ since: 0, successes: succeeding(61_000), now: 61_000, messages: [{ deliveryId: "d1", alerts: [silent(10_000)] }, { deliveryId: "d2", alerts: [resolved(10_000, 50_000)] }] });
    expect(a).toMatchObject({ expected: 1, received: 1, lost: 0, doubled: 0, unexpected: 0, borderline: 0, resolvedDoubled: 0, resolvedWrong: 0, deliveries: 2, requests: 2 });
    // Its end is too recent to be owed a resolution yet (silentFor + the tolerance).
    expect(a).toMatchObject({ resolvable: 0, resolved: 0 });
    const later = countSilences({ since: 0, successes, now, messages: [{ deliveryId: "d1", alerts: [silent(10_000)] }, { deliveryId: "d2", alerts: [resolved(10_000, 50_000)] }] });
    expect(later).toMatchObject({ resolvable: 1, resolved: 1 });
  });

  it("counts a silence not received as lost, and its missing resolution not as owed", () => {
    expect(countSilences({ since: 0, successes, now, messages: [] })).toMatchObject({ expected: 1, received: 0, lost: 1, resolvable: 0, lostGaps: ["1970-01-01T00:00:10.000Z+40s"] });
  });

  it("a retry of one delivery is one; two deliveries of one silence are doubled, as are two resolutions", () => {
    const retried = countSilences({ since: 0, successes, now, messages: [{ deliveryId: "d1", alerts: [silent(10_000)] }, { deliveryId: "d1", alerts: [silent(10_000)] }] });
    expect(retried).toMatchObject({ received: 1, doubled: 0, deliveries: 1, requests: 2 });
    const twice = countSilences({
      since: 0,
      successes,
      now,
      messages: [
        { deliveryId: "d1", alerts: [silent(10_000)] },
        { deliveryId: "d2", alerts: [silent(10_000), resolved(10_000, 50_000)] },
        { deliveryId: "d3", alerts: [resolved(10_000, 50_000)] },
      ],
    });
    expect(twice).toMatchObject({ received: 1, doubled: 1, resolvedDoubled: 1 });
  });

  it("a silence reported for a gap no longer than silentFor is unexpected; a resolution naming another success is wrong", () => {
    const a = countSilences({ since: 0, successes, now, messages: [{ deliveryId: "d1", alerts: [silent(3_000), silent(10_000), resolved(10_000, 51_000)] }] });
    // Both silences received were ended by a success: each owed its resolution (the one for 3 s got none, the other's is wrong).
    expect(a).toMatchObject({ unexpected: 1, received: 1, resolvable: 2, resolved: 0, resolvedWrong: 1 });
    const orphan = countSilences({ since: 0, successes, now, messages: [{ deliveryId: "d1", alerts: [resolved(4_000, 5_000)] }] });
    expect(orphan.resolvedWrong).toBe(1);
  });

  it("a gap within the tolerance past silentFor is borderline either way; an open gap at the end counts", () => {
    const gap = SILENT_FOR_MS + SILENCE_TOLERANCE_MS - 2_000;
    const s = [...every(1_000, 10_000), ...every(10_000 + gap, 20_000 + gap)];
    expect(countSilences({ since: 0, successes: s, now: 21_000 + gap, messages: [] })).toMatchObject({ expected: 0, borderline: 1, lost: 0 });
    expect(countSilences({ since: 0, successes: s, now: 21_000 + gap, messages: [{ deliveryId: "d", alerts: [silent(10_000)] }] })).toMatchObject({ borderline: 1, unexpected: 0 });
    // No success since 20 s + gap: still silent at the count.
    const open = countSilences({ since: 0, successes: s, now: 20_000 + gap + SILENT_FOR_MS + SILENCE_TOLERANCE_MS + 1, messages: [] });
    expect(open).toMatchObject({ expected: 1, lost: 1 });
  });

  it("the first silence counts from when the watch began", () => {
    const a = countSilences({ since: 0, successes: every(40_000, now), now, messages: [{ deliveryId: "d", alerts: [silent(0), resolved(0, 40_000)] }] });
    expect(a).toMatchObject({ expected: 1, received: 1, resolvable: 1, resolved: 1, unexpected: 0 });
  });
});
