/**
 * The replication ids of the primaries a deployment's data lives on. A primary's `master_replid`
 * is random per primary term: a replica promoted in its place (a Cluster failover, automatic or
 * `CLUSTER FAILOVER`, a Sentinel failover) and a server restarted without its data both start a
 * new one. Redis replicates asynchronously, so a promotion may have dropped the last writes the
 * old primary acknowledged: which ones cannot be known, so a new term is treated as a possible
 * partial loss of what that primary held (coordinator.ts `generation()`, docs/decisions.md).
 * A slot migration to another primary keeps both primaries' terms (no loss).
 */
import type { Cluster, Redis } from "ioredis";
import type { RedisClient } from "./connection.js";

/** `role` and `master_replid` of an `INFO replication` reply. */
function parseReplication(info: string): { role: string | null; replid: string | null } {
  const field = (name: string) => new RegExp(`^${name}:(\\S+)`, "m").exec(info)?.[1] ?? null;
  return { role: field("role"), replid: field("master_replid") };
}

function isCluster(redis: RedisClient): redis is Cluster {
  return typeof (redis as Cluster).nodes === "function";
}

async function single(redis: Redis): Promise<string[]> {
  const { role, replid } = parseReplication(await redis.info("replication"));
  // A server that hides its replication section (some proxies) leaves only the store's marker.
  if (replid === null) return [];
  if (role !== "master") throw new Error(`the redis server is a ${role}, not the primary: waiting for the primary`);
  return [replid];
}

const CLUSTER_SLOTS = 16_384;

/**
 * Every primary of the cluster's slot map as this client knows it, plus any node it lists as a
 * replica that says it is a primary now (a promotion its map has not caught up with). The slot map,
 * not the client's live connections, names the primaries: ioredis drops a node it cannot reach from
 * its connections at once, and reading only the others gave a "new" set of terms (one primary fewer)
 * while the dead one's replica was not even elected yet, so a rebuild started on a broken topology
 * and a second one followed the promotion. A slot without a primary, a primary without a connection
 * or one that does not answer, or answers that it is a replica, makes the call fail: the topology is
 * changing, and the caller reads again a moment later.
 */
async function cluster(redis: Cluster): Promise<string[]> {
  const primaryKeys = new Set<string>();
  for (let slot = 0; slot < CLUSTER_SLOTS; slot++) {
    const key = redis.slots[slot]?.[0];
    if (!key) throw new Error(`the redis cluster client's slot map does not cover slot ${slot}: waiting for the topology`);
    primaryKeys.add(key);
  }
  const byKey = new Map(redis.nodes("all").map((n) => [`${n.options.host}:${n.options.port}`, n]));
  const primaries = [...primaryKeys].map((key) => {
    const node = byKey.get(key);
    if (!node) throw new Error(`redis cluster primary ${key} (in the slot map) has no connection: the topology is changing`);
    return { key, node };
  });
  const replicas = redis.nodes("slave").filter((n) => !primaryKeys.has(`${n.options.host}:${n.options.port}`));
  const [ofPrimaries, ofReplicas] = await Promise.all([
    Promise.all(primaries.map(async ({ key, node }) => ({ node: key, ...parseReplication(await node.info("replication")) }))),
    Promise.all(replicas.map((n) => n.info("replication").then(parseReplication, () => ({ role: null, replid: null })))),
  ]);
  const terms: string[] = [];
  for (const p of ofPrimaries) {
    if (p.role !== "master" || p.replid === null) throw new Error(`redis cluster node ${p.node} is no longer a primary (${p.role}): the topology is changing`);
    terms.push(p.replid);
  }
  for (const r of ofReplicas) if (r.role === "master" && r.replid !== null) terms.push(r.replid);
  return [...new Set(terms)].sort();
}

/** The replication ids of the primaries holding the data, sorted (empty when the server hides them). */
export function primaryTerms(redis: RedisClient): Promise<string[]> {
  return isCluster(redis) ? cluster(redis) : single(redis);
}
