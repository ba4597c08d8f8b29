import type { EventBus, Unsubscribe } from "../ports.js";
import type { LogFn } from "./checks.js";
import { quitRedis, type RedisClient, type SharedConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";

type Handler = (message: string) => void;

/**
 * EventBus on Redis pub/sub. Publishes go over the shared command connection; subscriptions use a
 * dedicated connection (a subscribed connection can run no other command). One Redis SUBSCRIBE per
 * channel however many handlers; subscribe() resolves once Redis acknowledged it, so a message
 * published after that is delivered. Logical channel names are namespaced by the deployment prefix.
 * ioredis re-subscribes after a reconnect; messages published while disconnected are lost (the
 * EventBus contract is best effort). On a Cluster, PUBLISH (also from inside a script) reaches every
 * node over the cluster bus, and the subscriber listens on one node, moving to another when it fails.
 */
export class RedisEventBus implements EventBus {
  /** Physical channel → its subscriptions; each subscription is its own entry. */
  private readonly channels = new Map<string, Set<{ handler: Handler }>>();
  private readonly drop: () => Promise<void>;

  constructor(
    private readonly conn: SharedConnection,
    private readonly subscriber: RedisClient,
    private readonly keys: RedisKeys,
    private readonly log: LogFn,
  ) {
    this.drop = conn.retain();
    subscriber.on("message", (channel: string, message: string) => this.deliver(channel, message));
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.conn.redis.publish(this.keys.channel(channel), message);
  }

  async subscribe(channel: string, handler: Handler): Promise<Unsubscribe> {
    const physical = this.keys.channel(channel);
    let subs = this.channels.get(physical);
    if (!subs) this.channels.set(physical, (subs = new Set()));
    const sub = { handler };
    subs.add(sub);
    // Commands on one connection run in order, so a SUBSCRIBE sent after a pending UNSUBSCRIBE of
    // the same channel wins, and awaiting a repeated SUBSCRIBE also waits for the first one's ack.
    await this.subscriber.subscribe(physical);
    return async () => {
      if (!subs.delete(sub) || subs.size > 0 || this.channels.get(physical) !== subs) return;
      this.channels.delete(physical);
      await this.subscriber.unsubscribe(physical);
    };
  }

  async close(): Promise<void> {
    this.channels.clear();
    await Promise.all([quitRedis(this.subscriber), this.drop()]);
  }

  private deliver(physical: string, message: string): void {
    const subs = this.channels.get(physical);
    if (!subs) return;
    for (const sub of [...subs]) {
      if (!subs.has(sub)) continue;
      try {
        sub.handler(message);
      } catch (err) {
        this.log("error", "event bus handler threw", { channel: physical, err: String(err) });
      }
    }
  }
}
