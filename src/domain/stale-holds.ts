/**
 * The two-pass repair of a stale hold (docs/design.md, "Repairs"): a hold (an overlap lock's
 * holder, a DAG timer lock's holder, a per-user run slot) whose holder looks ended or missing is
 * given back only when it looked so on two repair passes in a row. A writer takes the hold just
 * before it writes the holder (a fire takes the lock, then inserts its run; a claim takes its
 * slot, then marks the attempt RUNNING), so a single sighting may be that moment, not a crash.
 */

/** One repair pass's verdict: the holds to give back now, and the suspects to carry to the next pass. */
export interface StaleHoldVerdict<K> {
  /** Seen stale on this pass and the one before: give back. */
  release: K[];
  /** Seen stale for the first time: judged again on the next pass (pass this set back in). */
  suspects: Set<K>;
}

/**
 * Judges one repair pass. `previous` is the `suspects` of the pass before (empty on the first);
 * `staleNow` the holds this pass saw stale (holder ended or missing). A hold seen stale twice in a
 * row is released; a hold seen stale once becomes a suspect; a suspect not seen stale now (its
 * holder showed up running, or the hold is gone) is forgotten, so a later sighting starts over.
 */
export function judgeStaleHolds<K>(previous: ReadonlySet<K>, staleNow: Iterable<K>): StaleHoldVerdict<K> {
  const release: K[] = [];
  const suspects = new Set<K>();
  const released = new Set<K>();
  for (const k of staleNow) {
    if (released.has(k) || suspects.has(k)) continue;
    if (previous.has(k)) {
      release.push(k);
      released.add(k);
    } else {
      suspects.add(k);
    }
  }
  return { release, suspects };
}
