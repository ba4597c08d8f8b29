/**
 * The orphan-reclaim rule, one decision for every lease a scheduler reclaims after (a run's own
 * lease, a node lease's runs, a taken run's claim marker): given when the lease ended and whether
 * this scheduler owns the run's shard, act now or say when to look again. Pure: the lease watch
 * (lease-watch.ts, node-leases.ts) and the taken-claim reclaim (taken-claims.ts) do the I/O.
 *
 * A lease ends at its end instant, exclusive: it is over once `now > endsAt`. The owner of the
 * run's shard acts as soon as it is over. Any other scheduler acts only `orphanedAfterMs` later:
 * by then a live owner has long done it (it acts within milliseconds), so the owner is gone and
 * its shards not yet taken over (a shard lease outlives its dead holder by up to 15 s). Two
 * schedulers acting at once is safe: the write is fenced by the run's token and status.
 */

export type ReclaimDecision =
  /** Reclaim now; `orphan`: as a scheduler that does not own the run's shard. */
  | { act: true; orphan: boolean }
  /** Not yet: look again at `lookAt` (clock ms). */
  | { act: false; lookAt: number };

export function reclaimDecision(endsAt: number, now: number, owned: boolean, orphanedAfterMs: number): ReclaimDecision {
  if (now <= endsAt) return { act: false, lookAt: endsAt + 1 };
  if (owned) return { act: true, orphan: false };
  const orphanAt = endsAt + orphanedAfterMs;
  return now >= orphanAt ? { act: true, orphan: true } : { act: false, lookAt: orphanAt };
}

/** The earlier of two look-again times (null: none). */
export function earlier(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}
