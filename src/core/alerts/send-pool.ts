/**
 * The webhook calls in flight (docs/alerts.md, "Delivery"): the dispatcher's pass only starts calls
 * here and does not wait for them, so a receiver that never answers holds one slot for its timeout,
 * not the pass. Bounded three ways: `maxInFlight` calls in all, `perOwner` of one user's, `perRule`
 * of one rule's. Due deliveries are taken in turn across owners (one of each owner, then a second of
 * each, …), so one user's backlog cannot take every slot. What is durable does not change: a call
 * still takes its delivery with the conditional lease of sender.ts (a crash loses nothing, a call is
 * not made twice at once); this only decides which due deliveries this process starts now.
 */
import { AlertDeliveryStatus, type AlertDeliveryDoc } from "../../domain/index.js";
import type { Logger } from "../../support/index.js";
import type { AlertSender } from "./sender.js";

export interface SendPoolLimits {
  /** Calls in flight at once in this process. @default 64 */
  maxInFlight: number;
  /** Of one owner's deliveries. @default 4 */
  perOwner: number;
  /** Of one rule's deliveries. @default 1 */
  perRule: number;
}

export const DEFAULT_SEND_POOL: SendPoolLimits = { maxInFlight: 64, perOwner: 4, perRule: 1 };

export class SendPool {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly byOwner = new Map<string, number>();
  private readonly byRule = new Map<string, number>();

  constructor(
    private readonly deps: { sender: AlertSender; log: Logger },
    private readonly limits: SendPoolLimits = DEFAULT_SEND_POOL,
  ) {}

  /** Owners whose calls in flight are at their cap (the due query leaves them out, so others are read). */
  fullOwners(): string[] {
    return [...this.byOwner].filter(([, n]) => n >= this.limits.perOwner).map(([o]) => o);
  }

  /** Whether no more call can start now. */
  full(): boolean {
    return this.inFlight.size >= this.limits.maxInFlight;
  }

  /** Starts calls of `due` (oldest first within an owner, owners in turn) as far as the limits allow; how many started. */
  start(due: readonly AlertDeliveryDoc[]): number {
    const queues = new Map<string, AlertDeliveryDoc[]>();
    for (const d of due) {
      if (this.inFlight.has(d._id)) continue;
      const q = queues.get(d.ownerId);
      if (q) q.push(d);
      else queues.set(d.ownerId, [d]);
    }
    let started = 0;
    while (queues.size > 0 && !this.full()) {
      for (const [owner, q] of queues) {
        if (this.full()) break;
        if ((this.byOwner.get(owner) ?? 0) >= this.limits.perOwner) {
          queues.delete(owner);
          continue;
        }
        const i = q.findIndex((d) => (this.byRule.get(d.ruleId) ?? 0) < this.limits.perRule);
        if (i < 0) {
          queues.delete(owner);
          continue;
        }
        const [d] = q.splice(i, 1);
        if (q.length === 0) queues.delete(owner);
        this.launch(d!);
        started++;
      }
    }
    return started;
  }

  /** Waits for every call in flight (the engine stopping). */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()]);
  }

  private launch(d: AlertDeliveryDoc): void {
    bump(this.byOwner, d.ownerId, 1);
    bump(this.byRule, d.ruleId, 1);
    const call = this.deps.sender
      .attempt(d)
      .then((r) => {
        if (r?.status === AlertDeliveryStatus.FAILED) this.deps.log.warn({ deliveryId: r._id, ruleId: r.ruleId, error: r.error }, "alert delivery given up");
      })
      .catch((e: unknown) => this.deps.log.error({ deliveryId: d._id, ruleId: d.ruleId, err: e }, "alert delivery attempt failed"))
      .finally(() => {
        this.inFlight.delete(d._id);
        bump(this.byOwner, d.ownerId, -1);
        bump(this.byRule, d.ruleId, -1);
      });
    this.inFlight.set(d._id, call);
  }
}

function bump(m: Map<string, number>, k: string, by: number): void {
  const n = (m.get(k) ?? 0) + by;
  if (n <= 0) m.delete(k);
  else m.set(k, n);
}
