/**
 * Which Redis a deployment runs on: one server (`REDIS_URL`), a Redis Cluster
 * (`REDIS_CLUSTER_NODES`) or a primary behind Sentinel (`REDIS_SENTINELS` + `REDIS_SENTINEL_NAME`).
 * The config builds one; connection.ts opens the matching ioredis client.
 */

export interface RedisNode {
  host: string;
  port: number;
}

/** Credentials of the data nodes (a cluster's nodes, or the primary and replicas behind Sentinel). */
export interface RedisAuth {
  username?: string;
  password?: string;
}

/**
 * TLS to the data nodes (and, behind Sentinel, to the sentinels when `sentinelTls` is set): the
 * PEM contents of a private CA (else the system's CAs are trusted), a client certificate and its key
 * for mutual TLS, and the name to check the servers' certificates against instead of the address
 * connected to (cluster nodes and the primary behind Sentinel are reached at the addresses they
 * announce, usually IPs: a certificate without those IPs needs the name its certificates carry).
 */
export interface RedisTls {
  ca?: string;
  cert?: string;
  key?: string;
  servername?: string;
}

export type RedisTarget =
  | { kind: "single"; url: string; tls?: RedisTls }
  | ({ kind: "cluster"; nodes: RedisNode[]; tls?: RedisTls } & RedisAuth)
  | ({ kind: "sentinel"; sentinels: RedisNode[]; name: string; sentinelPassword?: string; tls?: RedisTls; sentinelTls?: RedisTls } & RedisAuth);

/**
 * `host:port,host:port,…` (IPv6 hosts in brackets: `[::1]:7000`) as nodes. Throws a RangeError
 * naming `setting`, the bad item and what is allowed.
 */
export function parseRedisNodes(setting: string, raw: string): RedisNode[] {
  const items = raw.split(",").map((s) => s.trim());
  if (items.every((s) => s === "")) throw new RangeError(`${setting}: empty; give host:port,host:port,… (e.g. 10.0.0.1:7000,10.0.0.2:7000)`);
  const nodes: RedisNode[] = [];
  for (const item of items) {
    if (item === "") throw new RangeError(`${setting}: "${raw}" has an empty item; give host:port,host:port,… without empty entries`);
    const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9_.-]+)):(\d{1,5})$/.exec(item);
    const port = m ? Number(m[3]) : NaN;
    if (!m || port < 1 || port > 65_535) {
      throw new RangeError(`${setting}: "${item}" is not host:port (a host name or IPv4 address, or an IPv6 address in brackets, then a port from 1 to 65535)`);
    }
    nodes.push({ host: m[1] ?? m[2]!, port });
  }
  const seen = new Set<string>();
  for (const n of nodes) {
    const key = `${n.host}:${n.port}`;
    if (seen.has(key)) throw new RangeError(`${setting}: ${key} is listed twice`);
    seen.add(key);
  }
  return nodes;
}

/** For logs and errors: the target without credentials. */
export function describeRedisTarget(t: RedisTarget): string {
  if (t.kind === "single") {
    try {
      const u = new URL(t.url);
      return `redis ${u.host}${u.pathname && u.pathname !== "/" ? u.pathname : ""}${u.protocol === "rediss:" ? " (TLS)" : ""}`;
    } catch {
      return "redis (unparsable url)";
    }
  }
  const list = (ns: RedisNode[]) => ns.map((n) => (n.host.includes(":") ? `[${n.host}]:${n.port}` : `${n.host}:${n.port}`)).join(",");
  const tls = t.tls ? " (TLS)" : "";
  if (t.kind === "cluster") return `redis cluster ${list(t.nodes)}${tls}`;
  return `redis sentinel ${t.name} via ${list(t.sentinels)}${t.tls && !t.sentinelTls ? " (TLS to the data nodes only)" : tls}`;
}
