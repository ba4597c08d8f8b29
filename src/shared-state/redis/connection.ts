import { Redis } from "ioredis";
import type { LogFn } from "./checks.js";

/** Opens a connection and waits until it is ready; connection errors go to `log`, not to stderr. */
export async function openRedis(url: string, name: string, log: LogFn, opts: { autoPipeline?: boolean } = {}): Promise<Redis> {
  // Auto-pipelining sends the commands issued in one event-loop turn as one write: under load
  // (a batch of fires, a batch of claims) that is one round trip instead of one per command.
  const redis = new Redis(url, { lazyConnect: true, connectionName: name, enableAutoPipelining: opts.autoPipeline ?? false });
  redis.on("error", (err: Error) => log("warn", "redis connection error", { connection: name, err: err.message }));
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect(); // stop the reconnect loop, or it would keep the process alive
    throw err;
  }
  return redis;
}

/** QUIT after pending replies arrive; a connection that is already down is just dropped. */
export async function quitRedis(redis: Redis): Promise<void> {
  if (redis.status === "end") return;
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}

/**
 * One command connection shared by the adapters of a SharedState. Each adapter holds a reference
 * and drops it in its own close(); the connection quits when the last one is dropped, so closing
 * one port never breaks the others.
 */
export class SharedConnection {
  private refs = 0;
  private quitting: Promise<void> | null = null;

  constructor(readonly redis: Redis) {}

  /** Takes a reference; the returned function drops it (idempotent). */
  retain(): () => Promise<void> {
    this.refs++;
    let dropped = false;
    return async () => {
      if (dropped) return this.quitting ?? undefined;
      dropped = true;
      if (--this.refs === 0) this.quitting = quitRedis(this.redis);
      await this.quitting;
    };
  }
}
