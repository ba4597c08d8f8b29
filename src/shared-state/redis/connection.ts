import type { ConnectionOptions } from "node:tls";
import { Cluster, Redis, type RedisOptions } from "ioredis";
import type { LogFn } from "./checks.js";
import { describeRedisTarget, type RedisTarget, type RedisTls } from "./target.js";

/** A connection to one server (or a primary behind Sentinel), or to a Redis Cluster. */
export type RedisClient = Redis | Cluster;

export interface RedisClientOptions {
  /** `CLIENT SETNAME` of the connection(s). */
  name?: string;
  /** Connect on the first command or `connect()` instead of at once. @default false */
  lazyConnect?: boolean;
  /** Send the commands of one event-loop turn as one write. @default false */
  autoPipeline?: boolean;
  /**
   * With `autoPipeline`: commands sent at once instead, each in its own write. An auto-pipeline
   * waits for the one before it on the connection to be answered (ioredis serves one at a time),
   * so a command on a run's way to its start would wait a round trip behind unrelated ones.
   */
  immediate?: readonly string[];
  /** Give up on a command after this many reconnects (ioredis's `maxRetriesPerRequest`). @default 20 */
  maxRetriesPerRequest?: number | null;
  /** Do not reconnect after the connection drops (probes and admin clients of tests). @default false */
  noReconnect?: boolean;
}

/**
 * How long a dropped connection waits before each reconnect: 50, 100, 150, then every 200 ms
 * (ioredis's own curve rises by 50 ms a try up to 2 s: 2 s into a failover it already waited
 * ~0.45 s between tries, and a client sat that long on a primary already promoted; the Sentinel
 * failover detector's +switch-master does not cut a pending wait short). A try is one TCP connect
 * (behind Sentinel, one question to a sentinel first): a few a second per connection, for the
 * seconds of an outage, is nothing to the servers.
 */
export const RECONNECT_CAP_MS = 200;
const reconnectDelay = (times: number) => Math.min(times * 50, RECONNECT_CAP_MS);

/**
 * The TLS options of node's `tls.connect` for `t`: the CA replaces the system's trusted CAs when
 * given, the certificate and key are for mutual TLS, `servername` is the name the servers'
 * certificates are checked against (and sent as SNI) instead of the address connected to.
 */
export function tlsConnectOptions(t: RedisTls): ConnectionOptions {
  return { ...(t.ca ? { ca: t.ca } : {}), ...(t.cert ? { cert: t.cert } : {}), ...(t.key ? { key: t.key } : {}), ...(t.servername ? { servername: t.servername } : {}) };
}

/**
 * The one factory of Redis connections (src, bench and the chaos harness): a standalone `Redis`
 * for a URL, a `Cluster` for cluster nodes (commands go to the primary of each key's slot and
 * follow MOVED/ASK and failovers), a `Redis` in Sentinel mode for a Sentinel group (it asks the
 * sentinels for the primary whenever it reconnects, and `failoverDetector` reconnects on
 * +switch-master, so a client never stays on a demoted primary). When the switch arrives while
 * the client is still retrying the dead primary, ioredis ends the connection for good (seen in the
 * Sentinel chaos scenario: every role lost Redis until restarted): openRedis connects it again.
 * TLS (`target.tls`): a `rediss://` URL, every cluster node, the primary and replicas behind
 * Sentinel, and the sentinels too when `sentinelTls` is set.
 */
export function createRedisClient(target: RedisTarget | string, opts: RedisClientOptions = {}): RedisClient {
  const t: RedisTarget = typeof target === "string" ? { kind: "single", url: target } : target;
  const tls = t.tls ? tlsConnectOptions(t.tls) : undefined;
  const common: RedisOptions = {
    lazyConnect: opts.lazyConnect ?? false,
    ...(opts.name ? { connectionName: opts.name } : {}),
    ...(opts.maxRetriesPerRequest !== undefined ? { maxRetriesPerRequest: opts.maxRetriesPerRequest } : {}),
    retryStrategy: opts.noReconnect ? () => null : reconnectDelay,
  };
  const autoPipelining = { enableAutoPipelining: opts.autoPipeline ?? false, ...(opts.immediate ? { autoPipeliningIgnoredCommands: [...opts.immediate] } : {}) };
  switch (t.kind) {
    case "single":
      return new Redis(t.url, { ...common, ...autoPipelining, ...(tls ? { tls } : {}) });
    case "sentinel":
      return new Redis({
        ...common,
        ...autoPipelining,
        sentinels: t.sentinels,
        name: t.name,
        failoverDetector: true,
        // Reconnects of the failover detector's sentinel subscriptions: as quick as the primary's.
        sentinelReconnectStrategy: reconnectDelay,
        ...(tls ? { tls, enableTLSForSentinelMode: true } : {}),
        ...(t.sentinelTls ? { sentinelTLS: tlsConnectOptions(t.sentinelTls) } : {}),
        ...(t.username ? { username: t.username } : {}),
        ...(t.password ? { password: t.password } : {}),
        ...(t.sentinelPassword ? { sentinelPassword: t.sentinelPassword } : {}),
      });
    case "cluster": {
      const { lazyConnect, retryStrategy: _perNodeRetries, ...perNode } = common;
      return new Cluster(t.nodes, {
        lazyConnect,
        // No auto-pipelining on a Cluster: a pipeline that meets a slot on the move (a reshard, a
        // failover) gets MOVED for some of its commands, and ioredis returns those errors to the
        // callers instead of following them (the cluster chaos scenario: an arm failed with
        // "MOVED 247" during a reshard); a command on its own is redirected and retried.
        enableAutoPipelining: false,
        ...(opts.noReconnect ? { clusterRetryStrategy: () => null } : { clusterRetryStrategy: reconnectDelay }),
        // maxRedirections stays ioredis's 16: a command whose node is gone fails after ~1.6 s (100 ms
        // apart, a fresh slot map each time), and its caller retries. Holding it through a whole
        // election (tried: 50) runs scripts seconds after the `now` their caller gave them: a take's
        // claim markers then expire that much early, and the integration test's lossy failover
        // started a run twice.
        // TLS: the certificates are checked against the name given (REDIS_TLS_SERVERNAME), else
        // the address: a seed node named by host name keeps its name (not resolved to an IP
        // first), the others are reached at the addresses the cluster announces.
        ...(tls ? { dnsLookup: (address: string, callback: (err: NodeJS.ErrnoException | null, address: string) => void) => callback(null, address) } : {}),
        redisOptions: { ...perNode, ...(tls ? { tls } : {}), ...(t.username ? { username: t.username } : {}), ...(t.password ? { password: t.password } : {}) },
      });
    }
  }
}

/** Opens a connection and waits until it is ready; connection errors go to `log`, not to stderr. */
export async function openRedis(target: RedisTarget | string, name: string, log: LogFn, opts: { autoPipeline?: boolean; immediate?: readonly string[] } = {}): Promise<RedisClient> {
  // Auto-pipelining sends the commands issued in one event-loop turn as one write: under load
  // (a batch of fires, a batch of claims) that is one round trip instead of one per command.
  // On a Cluster it groups them per node.
  const redis = createRedisClient(target, { lazyConnect: true, name, autoPipeline: opts.autoPipeline ?? false, ...(opts.immediate ? { immediate: opts.immediate } : {}) });
  let lastError: Error | null = null;
  redis.on("error", (err: Error) => {
    if (!lastError || !(redis instanceof Cluster)) lastError = err;
    log("warn", "redis connection error", { connection: name, err: err.message });
  });
  // A Cluster node's own error (a refused TLS handshake) is worth more than the cluster's summary.
  if (redis instanceof Cluster) redis.on("node error", (err: Error) => void (lastError = err));
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect(); // stop the reconnect loop, or it would keep the process alive
    throw connectError(target, err, lastError);
  }
  keepConnected(redis, name, log);
  return redis;
}

/**
 * Why a first connect failed, in words: ioredis rejects with "Connection is closed." when a TLS
 * handshake fails (a certificate the CA did not sign, a name that does not match, a client
 * certificate the server refuses); the cause is in the error event before it.
 */
function connectError(target: RedisTarget | string, err: unknown, last: Error | null): Error {
  const t: RedisTarget = typeof target === "string" ? { kind: "single", url: target } : target;
  // A Cluster's first connect fails with "None of startup nodes is available" after "Failed to
  // refresh slots cache." (ClusterAllFailedError): a node's own error (a TLS refusal) came first,
  // as a "node error" event (`last`).
  const cause = last && last !== err ? last : err instanceof Error ? err : new Error(String(err));
  const code = (cause as NodeJS.ErrnoException).code ?? "";
  const overTls = t.tls !== undefined || (t.kind === "single" && t.url.startsWith("rediss:"));
  // A server that refuses the client's certificate may just reset the connection mid-handshake;
  // a Cluster's node clients report a failed handshake only as a closed connection.
  const tlsProblem = /certificate|CERT_|SELF_SIGNED|ssl|tls|handshake|altnames|alert/i.test(`${code} ${cause.message}`) || (overTls && (code === "ECONNRESET" || /Connection is closed/.test(cause.message)));
  const hint = tlsProblem
    ? " (TLS: the servers' certificates must be signed by the CA in REDIS_TLS_CA_FILE, or by a system CA without it, and name the host connected to or REDIS_TLS_SERVERNAME; a server that requires client certificates needs REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE)"
    : "";
  return new Error(`cannot connect to ${describeRedisTarget(t)}: ${cause.message}${code && !cause.message.includes(code) ? ` [${code}]` : ""}${hint}`, { cause: err });
}

/** Clients being closed on purpose (quitRedis): their end is not a loss. */
const closing = new WeakSet<RedisClient>();
const RECONNECT_AFTER_END_MS = 500;

/**
 * ioredis reconnects by itself after a dropped connection, but gives up for good in a few cases
 * (a failed connect during a failover, a retry strategy that stops): the client then ends and
 * every later command fails with "Connection is closed". A process's long-lived connection must
 * outlive that, so an end that was not asked for is followed by a new connect at once, then every
 * 500 ms until one succeeds. (Behind Sentinel the usual case is the failover detector's: the
 * +switch-master notice arrives just after the client found the new primary by itself, and ends
 * it; waiting 500 ms there added half a second to every failover.)
 */
function keepConnected(redis: RedisClient, name: string, log: LogFn): void {
  let timer: NodeJS.Timeout | null = null;
  let failedInARow = 0;
  redis.on("ready", () => {
    failedInARow = 0;
  });
  redis.on("end", () => {
    if (closing.has(redis) || timer) return;
    log("warn", "redis connection ended; connecting again", { connection: name });
    timer = setTimeout(
      () => {
        timer = null;
        if (closing.has(redis) || redis.status !== "end") return;
        failedInARow++;
        redis.connect().catch(() => undefined); // a failure ends the client again: the next round retries
      },
      failedInARow === 0 ? 0 : RECONNECT_AFTER_END_MS,
    );
  });
  closingHooks.set(redis, () => {
    if (timer) clearTimeout(timer);
    timer = null;
  });
}
const closingHooks = new WeakMap<RedisClient, () => void>();

/** QUIT after pending replies arrive; a connection that is already down is just dropped. */
export async function quitRedis(redis: RedisClient): Promise<void> {
  closing.add(redis);
  closingHooks.get(redis)?.();
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

  constructor(readonly redis: RedisClient) {}

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
