/**
 * Claims of runs taken with their payload, confirmed in MongoDB after they started.
 *
 * A run taken from the ready queue with its payload (the run as enqueued) is started at once and
 * its claim confirmed `delayMs` later, in a batch with other writes: the conditional update that
 * bumps the fencing token, as for any claim. One that ends sooner reports its claim and its result
 * in one write instead (see Claim `withResult`). A confirm that is refused (the run was cancelled
 * or changed meanwhile) kills what was started before its result could count; one that cannot be
 * written by the attempt's kill deadline kills it too (the entry's claim marker keeps the reaper
 * from handing the run to anyone else until then). The run is reported, and its lease renewed,
 * only once confirmed.
 */
import { coerceError } from "../domain/index.js";
import type { RunService } from "../core/index.js";
import type { Logger } from "../support/index.js";
import type { Clock } from "../shared-state/index.js";
import type { RunDoc } from "../domain/index.js";
import { REFUSED, stopAttempt, type Attempt } from "./attempt.js";
import type { NodeRegistry } from "./node-registry.js";

export interface ConfirmQueueDeps {
  runs: RunService;
  clock: Clock;
  log: Logger;
  nodeId: string;
  leaseMs: number;
  /** How long after its start a taken run's claim is confirmed. */
  delayMs: number;
  /** How long a confirmed attempt may run before its first renewal (see options leaseSafeMs). */
  safeMs: number;
  /** This node's lease: a claim is confirmed under its current epoch. */
  lease: Pick<NodeRegistry, "epoch">;
}

export class ConfirmQueue {
  /** Taken runs whose claim is to be confirmed, in start order (one timer for all). */
  private queue: Attempt[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: ConfirmQueueDeps) {}

  /**
   * The least time a taken run must have left before its kill deadline to be started: its claim
   * is confirmed `delayMs` after the start, by a write; with less left it would be killed at its
   * deadline before the confirm lands (a take whose reply came back late: a Redis failover held it
   * for seconds), so it is handed back to the queue at once instead of started and killed, and
   * queued again only when its claim marker expires. Twice the delay: the delay, and as long again
   * for the write.
   */
  get leftNeededMs(): number {
    return 2 * this.deps.delayMs;
  }

  /** A taken run just started (its claim is `queued`). */
  add(a: Attempt): void {
    this.queue.push(a);
    if (!this.timer) this.timer = setTimeout(() => this.sendDue(), this.deps.delayMs);
  }

  /** Every attempt has ended: no confirm is left to send. */
  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queue = [];
    this.head = 0;
  }

  /** Sends the confirms that are due, and waits for the next one. */
  private sendDue(): void {
    this.timer = null;
    const now = this.deps.clock();
    const queue = this.queue;
    while (this.head < queue.length) {
      const a = queue[this.head]!;
      const claim = a.claim;
      // Queued attempts are `queued` until sent here, or `withResult` once they ended before.
      const startedAt = claim.state === "queued" || claim.state === "withResult" ? claim.startedAt : now;
      const dueAt = startedAt + this.deps.delayMs;
      if (dueAt > now) {
        this.timer = setTimeout(() => this.sendDue(), dueAt - now);
        break;
      }
      queue[this.head++] = undefined as unknown as Attempt;
      // Ended before its confirm was due: the claim goes with the result (see Claim `withResult`).
      if (claim.state !== "queued") continue;
      let settle!: (ok: boolean) => void;
      a.claim = { state: "confirming", run: claim.run, confirmation: new Promise<boolean>((r) => (settle = r)) };
      void this.confirm(a, claim.run, claim.startedAt, settle);
    }
    if (this.head === queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 4_096 && this.head * 2 > queue.length) {
      this.queue = queue.slice(this.head);
      this.head = 0;
    }
  }

  /** Confirms the claim of a taken run, retrying store errors until the attempt's kill deadline. */
  private async confirm(a: Attempt, queued: RunDoc, startedAt: number, settle: (ok: boolean) => void): Promise<void> {
    for (;;) {
      try {
        const confirmed = await this.deps.runs.confirmClaim(queued, this.deps.nodeId, this.deps.leaseMs, startedAt, this.deps.lease.epoch);
        if (!confirmed) {
          stopAttempt(a, "CLAIM_LOST", "the run was cancelled, changed or claimed elsewhere before this executor confirmed its claim");
          a.claim = REFUSED;
          return settle(false);
        }
        a.claim = { state: "confirmed", run: a.stop === "CANCEL" ? { ...confirmed, cancelRequested: true } : confirmed };
        a.token = confirmed.fencingToken;
        a.killAt = this.deps.clock() + this.deps.safeMs;
        return settle(true);
      } catch (e) {
        if (a.stop === "LEASE_LOST" || this.deps.clock() >= a.killAt) {
          a.claim = REFUSED;
          return settle(false);
        }
        this.deps.log.warn({ err: coerceError(e), runId: queued._id }, "could not confirm a claim; retrying");
        await delay(200);
      }
    }
  }
}

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
