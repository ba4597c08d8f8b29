/** Alert deliveries as bus events (Channels.alertFired), for the alertFired subscription of every API instance. */
import { Channels, type EventBus, type Unsubscribe } from "../../shared-state/index.js";
import type { AlertDeliveryDoc, AlertEvent } from "../../domain/index.js";

export interface AlertFiredEvent {
  deliveryId: string;
  ruleId: string;
  ruleName: string;
  ownerId: string;
  test: boolean;
  events: AlertEvent[];
  count: number;
  runIds: string[];
  at: Date;
}

export class AlertBus {
  constructor(private readonly bus: EventBus) {}

  publish(d: AlertDeliveryDoc, ruleName: string): Promise<void> {
    const e = { deliveryId: d._id, ruleId: d.ruleId, ruleName, ownerId: d.ownerId, test: d.test, events: d.events, count: d.count, runIds: d.runIds.slice(0, 100), at: d.createdAt.getTime() };
    return this.bus.publish(Channels.alertFired, JSON.stringify(e));
  }

  subscribe(handler: (e: AlertFiredEvent) => void): Promise<Unsubscribe> {
    return this.bus.subscribe(Channels.alertFired, (msg) => {
      const raw = JSON.parse(msg) as Omit<AlertFiredEvent, "at"> & { at: number };
      handler({ ...raw, at: new Date(raw.at) });
    });
  }
}
