/**
 * Claim markers after a Redis data loss. A run this executor took with its payload is started at
 * once and confirmed in MongoDB a second later; until then only its claim marker in Redis says it
 * is spoken for. When Redis loses its data the marker goes with it, and the schedulers rebuild the
 * ready queues from MongoDB, where the run is still QUEUED: after a short grace
 * (scheduler/store-watch.ts, `rebuildGraceMs`) they push it again for another executor, skipping
 * runs that have a marker. So this watch reads the store's generation as the schedulers do (every
 * 500 ms, one round trip) and, when it changes, writes the markers of its unconfirmed takes back,
 * each until the attempt's own kill deadline, well within the grace. A taker whose confirm is
 * merely slow (MongoDB slow or unreachable from this node while Redis is not) then keeps its run
 * instead of racing a second attempt; one whose event loop is frozen past the grace cannot, and
 * is covered as before by its fencing token (its confirm is refused and it kills what it started).
 */
import { decodeRunPayload } from "../core/index.js";
import { coerceError } from "../domain/index.js";
import { Periodic, type Logger } from "../support/index.js";
import type { ClaimMarker, Clock, SharedState } from "../shared-state/index.js";
import type { Attempt } from "./attempt.js";

/** How often the store's generation is read (as the schedulers' store watch does). */
export const CLAIM_GUARD_CHECK_MS = 500;

export interface ClaimGuardDeps {
  state: SharedState;
  attempts: ReadonlyMap<string, Attempt>;
  clock: Clock;
  log: Logger;
}

export class ClaimGuard {
  private generation: string | null = null;
  private readonly loop: Periodic;
  /** check() is also called directly (at start): the loop's own guard does not cover that call. */
  private checking = false;

  constructor(private readonly deps: ClaimGuardDeps) {
    this.loop = new Periodic(() => this.check(), { everyMs: CLAIM_GUARD_CHECK_MS, log: deps.log, failure: "claim guard check failed", cadence: "fixed-rate" });
  }

  start(): void {
    this.loop.start();
  }

  stop(): void {
    void this.loop.stop();
  }

  /** One check: on a new generation, restores the markers. Returns how many it restored. */
  async check(): Promise<number> {
    if (this.checking) return 0;
    this.checking = true;
    try {
      const generation = await this.deps.state.coordinator.generation();
      const lost = this.generation !== null && generation !== this.generation;
      this.generation = generation;
      return lost ? await this.restore() : 0;
    } catch (e) {
      this.deps.log.warn({ err: coerceError(e) }, "could not check the shared store's generation");
      return 0;
    } finally {
      this.checking = false;
    }
  }

  /** The markers of the attempts whose claim is not in MongoDB yet, written back per pool. */
  private async restore(): Promise<number> {
    const byPool = new Map<string, ClaimMarker[]>();
    for (const a of this.deps.attempts.values()) {
      const pool = unconfirmedPool(a);
      if (pool === null) continue;
      const list = byPool.get(pool) ?? [];
      list.push({ runId: a.runId, expiresAt: a.killAt });
      byPool.set(pool, list);
    }
    let n = 0;
    for (const [pool, markers] of byPool) {
      await this.deps.state.ready.restoreClaims(pool, markers);
      n += markers.length;
    }
    this.deps.log.warn({ restored: n }, "the shared store lost its data: restored the claim markers of runs taken and not yet confirmed");
    return n;
  }
}

/** The queue an attempt was taken from while its claim is not in MongoDB yet (and still may be); else null. */
function unconfirmedPool(a: Attempt): string | null {
  if (a.stop === "CLAIM_LOST" || a.stop === "LEASE_LOST") return null;
  const c = a.claim;
  if (c.state === "queued" || c.state === "confirming") return c.run.pool;
  if (c.state === "withResult") return decodeRunPayload(c.payload).pool;
  return null;
}
