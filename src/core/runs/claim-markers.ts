/**
 * Claim markers given back: once a taken run's claim is in MongoDB (confirmed, or written with its
 * result), its marker in the ready queue has done its job. Dropping it keeps the expired markers
 * the lease watcher reads (scheduler/lease-watch.ts) down to those whose taker died before
 * confirming. Drops are batched per pool and sent a moment later: one script call per pool for
 * many confirms. A drop that is lost (a crash, a Redis error) costs nothing but a look: the
 * watcher finds the run RUNNING or finished and drops the marker itself.
 */
import { coerceError } from "../../domain/index.js";
import type { Logger } from "../../support/index.js";
import type { ClaimMarker, ReadyQueue } from "../../shared-state/index.js";

/** How long drops wait to be sent together. */
const DROP_DELAY_MS = 200;

export class ClaimMarkerDrops {
  private pending = new Map<string, ClaimMarker[]>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly ready: ReadyQueue,
    private readonly log: Logger,
  ) {}

  /** The marker of `runId` in `pool` is no longer needed, if it expires at or before `notAfter`. */
  drop(pool: string, runId: string, notAfter: number): void {
    let list = this.pending.get(pool);
    if (!list) this.pending.set(pool, (list = []));
    list.push({ runId, expiresAt: notAfter });
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), DROP_DELAY_MS);
      this.timer.unref();
    }
  }

  /** Sends what is pending. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const pending = this.pending;
    this.pending = new Map();
    await Promise.all(
      [...pending].map(async ([pool, markers]) => {
        try {
          await this.ready.dropClaims(pool, markers);
        } catch (e) {
          this.log.debug({ err: coerceError(e), pool, count: markers.length }, "could not drop claim markers; the lease watcher will");
        }
      }),
    );
  }
}
