/**
 * Queued runs into their pool's ready queue. The entry carries the run itself (its payload, see
 * encodeRunPayload) so an executor can start it and confirm the claim afterwards, unless its
 * owner has a concurrency limit: then the claim must take a slot in MongoDB first.
 */
import type { RunDoc } from "../../domain/index.js";
import type { Clock, ReadyEntry, SharedState } from "../../shared-state/index.js";
import { encodeRunPayload } from "../events.js";
import type { UserLimits } from "./user-limits.js";

/**
 * A QUEUED run's ready-queue entry at `now`: a run staged ahead of its time (`notBefore` in the
 * future) waits in the queue's staging until then, and is ordered by that time.
 */
export function readyEntry(run: RunDoc, now: number, payload: string | null): ReadyEntry {
  const notBefore = run.notBefore && run.notBefore.getTime() > now ? run.notBefore.getTime() : undefined;
  const enqueuedAt = notBefore ?? (run.queuedAt ?? run.createdAt).getTime();
  return { runId: run._id, ownerId: run.ownerId, priority: run.priority, enqueuedAt, notBefore, payload };
}

export class ReadyQueueing {
  private readonly pendingPushes = new Map<string, { entries: ReadyEntry[]; done: Promise<void> }>();

  constructor(private readonly deps: { state: SharedState; clock: Clock; limits: UserLimits }) {}

  /** Pushes a QUEUED run to its pool's ready queue (idempotent). */
  async enqueue(run: RunDoc): Promise<void> {
    await this.push(run.pool, await this.entryOf(run));
  }

  /**
   * The QUEUED run's ready-queue entry as of now, its payload encoded: made ahead of the run's
   * insert, it is ready to {@link push} the moment the insert lands.
   */
  async entryOf(run: RunDoc): Promise<ReadyEntry> {
    const now = this.deps.clock();
    const payload = (await this.deps.limits.of(run.ownerId)) === null ? encodeRunPayload(run) : null;
    return readyEntry(run, now, payload);
  }

  /** Pushes an entry (see entryOf) to `pool`'s ready queue (idempotent). */
  async push(pool: string, entry: ReadyEntry): Promise<void> {
    // The pushes of one event-loop turn go to each pool's queue in one call (one script, one wake-up).
    let pending = this.pendingPushes.get(pool);
    if (!pending) {
      const entries = [entry];
      const done = new Promise<void>((resolve, reject) =>
        setImmediate(() => {
          this.pendingPushes.delete(pool);
          this.deps.state.ready.push(pool, entries).then(resolve, reject);
        }),
      );
      pending = { entries, done };
      this.pendingPushes.set(pool, pending);
    } else {
      pending.entries.push(entry);
    }
    await pending.done;
  }
}
