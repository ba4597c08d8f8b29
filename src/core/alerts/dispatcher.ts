/**
 * Firings into deliveries, deliveries onto the wire (docs/alerts.md, "Delivery"). A rule's first
 * firing goes out at once; firings that come while a delivery of the rule was made less than
 * `groupWindowMs` ago wait for the window to pass and go out together, as one message with their
 * count and ids. A delivery is inserted first, then the firings still without one are given to it
 * (conditional: a firing is in exactly one delivery), then its body is fixed; a dispatcher that
 * dies in between leaves a delivery without a body, which the next pass finishes.
 */
import { ALERT_GROUP_MAX, AlertDeliveryStatus, type AlertDeliveryDoc, type AlertRuleDoc } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import type { Logger } from "../../support/index.js";
import {
  assignFirings,
  buildDelivery,
  dropDelivery,
  dueDeliveries,
  insertDelivery,
  markAlertDelivered,
  newId,
  pendingFiringRules,
  pendingFirings,
  unbuiltDeliveries,
  type Mongo,
} from "../../store/index.js";
import type { AlertBus } from "./bus.js";
import { alertMessage } from "./message.js";
import type { AlertSender } from "./sender.js";
import { SendPool } from "./send-pool.js";

/** A delivery without a body older than this was left by a dispatcher that died. */
const UNBUILT_AFTER_MS = 30_000;

export interface DispatcherDeps {
  mongo: Mongo;
  clock: Clock;
  log: Logger;
  sender: AlertSender;
  bus: AlertBus;
  groupWindowMs: number;
}

export class AlertDispatcher {
  private readonly pool: SendPool;

  constructor(private readonly deps: DispatcherDeps) {
    this.pool = new SendPool({ sender: deps.sender, log: deps.log });
  }

  /** Waits for the webhook calls still in flight (the engine stopping). */
  drain(): Promise<void> {
    return this.pool.drain();
  }

  /** Groups what is due into deliveries, then starts the calls of what is due (not waiting for them); the calls started. */
  async pass(rules: ReadonlyMap<string, AlertRuleDoc>): Promise<number> {
    const now = this.deps.clock();
    for (const d of await unbuiltDeliveries(this.deps.mongo, new Date(now - UNBUILT_AFTER_MS), 100)) await this.build(d, rules.get(d.ruleId) ?? null);
    for (const p of await pendingFiringRules(this.deps.mongo, 1_000)) {
      const rule = rules.get(p.ruleId);
      if (!rule) continue; // deleted: deleteAlertRule removes its pending firings
      const openAt = rule.lastDeliveryAt ? rule.lastDeliveryAt.getTime() + this.deps.groupWindowMs : 0;
      if (now < openAt) continue;
      await this.group(rule, now);
    }
    return this.send(now);
  }

  private async group(rule: AlertRuleDoc, now: number): Promise<void> {
    const firings = await pendingFirings(this.deps.mongo, rule._id, ALERT_GROUP_MAX);
    if (firings.length === 0) return;
    const at = new Date(now);
    const d: AlertDeliveryDoc = {
      _id: newId(), ruleId: rule._id, ownerId: rule.ownerId, test: false, events: [], count: 0, firingIds: [], runIds: [], body: null, url: rule.webhook.url,
      status: AlertDeliveryStatus.PENDING, attempts: 0, nextAttemptAt: at, leaseUntil: null, responseCode: null, error: null, createdAt: at, deliveredAt: null,
    };
    await insertDelivery(this.deps.mongo, d);
    await markAlertDelivered(this.deps.mongo, rule._id, at);
    rule.lastDeliveryAt = at;
    await this.build(d, rule, firings.map((f) => f._id));
  }

  /** Gives the firings to `d` and fixes its body; a delivery that got none is dropped. */
  private async build(d: AlertDeliveryDoc, rule: AlertRuleDoc | null, ids: readonly string[] = []): Promise<void> {
    const carried = await assignFirings(this.deps.mongo, ids, d._id);
    if (carried.length === 0 || !rule) {
      if (carried.length > 0) this.deps.log.warn({ deliveryId: d._id, ruleId: d.ruleId }, "alert delivery of a deleted rule dropped");
      await dropDelivery(this.deps.mongo, d._id);
      return;
    }
    const msg = alertMessage(d._id, rule, carried, { test: false, at: d.createdAt });
    const set = { body: msg.body, count: carried.length, firingIds: carried.map((f) => f._id), runIds: msg.runIds, events: msg.events };
    if (await buildDelivery(this.deps.mongo, d._id, set)) await this.deps.bus.publish({ ...d, ...set }, rule.name).catch(() => undefined);
  }

  /** Starts calls of due deliveries in the pool; the owners at their cap are left out of the read, so others' come up. */
  private async send(now: number): Promise<number> {
    if (this.pool.full()) return 0;
    const due = await dueDeliveries(this.deps.mongo, new Date(now), 200, this.pool.fullOwners());
    return this.pool.start(due);
  }
}
