import type { EventBus, Unsubscribe } from "../ports.js";
import type { LogFn } from "../checks.js";

type Handler = (message: string) => void;

/**
 * In-process pub/sub. Delivery is asynchronous (a microtask per message), so a publisher never
 * runs a handler inside its own call stack, and per channel messages arrive in publish order.
 * A handler sees the messages published after its subscribe() and before its unsubscribe();
 * a throwing handler is logged and does not keep the others from running.
 */
export class MemoryEventBus implements EventBus {
  /** Each subscription is its own Set entry, so one function subscribed twice runs twice. */
  private readonly channels = new Map<string, Set<{ handler: Handler }>>();

  constructor(private readonly log: LogFn) {}

  async publish(channel: string, message: string): Promise<void> {
    const subs = this.channels.get(channel);
    if (!subs || subs.size === 0) return;
    const snapshot = [...subs];
    queueMicrotask(() => {
      for (const sub of snapshot) {
        if (!subs.has(sub)) continue; // unsubscribed before delivery
        try {
          sub.handler(message);
        } catch (err) {
          this.log("error", "event bus handler threw", { channel, err: String(err) });
        }
      }
    });
  }

  async subscribe(channel: string, handler: Handler): Promise<Unsubscribe> {
    let subs = this.channels.get(channel);
    if (!subs) this.channels.set(channel, (subs = new Set()));
    const sub = { handler };
    subs.add(sub);
    return async () => {
      subs.delete(sub);
      if (subs.size === 0 && this.channels.get(channel) === subs) this.channels.delete(channel);
    };
  }

  async close(): Promise<void> {
    for (const subs of this.channels.values()) subs.clear();
    this.channels.clear();
  }
}
