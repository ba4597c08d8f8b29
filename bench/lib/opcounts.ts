/**
 * Work per job, counted rather than timed (so it does not depend on how busy the machine is):
 * Redis commands from `INFO commandstats`, MongoDB operations from `serverStatus().opcounters`
 * (the emulator keeps the same counters). Deltas between two snapshots, divided by the runs.
 */
import type { Cluster, Redis } from "ioredis";
import { onEachNode } from "./redis.js";
import type { Db } from "mongodb";

export type Counts = Record<string, number>;

/**
 * `INFO commandstats` → { evalsha: 1234, publish: 99, … } (calls per command); on a Cluster summed
 * over the primaries (a replica's counts repeat its primary's writes).
 */
export async function redisCommandCounts(redis: Redis | Cluster): Promise<Counts> {
  const out: Counts = {};
  for (const info of await onEachNode(redis, "master", (n) => n.info("commandstats"))) {
    for (const line of info.split(/\r?\n/)) {
      const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
      if (m) out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
    }
  }
  return out;
}

/** `serverStatus().opcounters` → { insert, query, update, delete, getmore, command }. */
export async function mongoOpCounts(db: Db): Promise<Counts> {
  const s = (await db.admin().serverStatus()) as { opcounters?: Counts };
  return { ...(s.opcounters ?? {}) };
}

/**
 * Documents written so far (inserted + changed by updates + deleted), from
 * `serverStatus().metrics.document` (MongoDB and the emulator), and per collection where the
 * emulator says (`kairosEmulator.documentsWritten`, keyed `db.collection`; empty on MongoDB).
 */
export async function mongoDocumentsWritten(db: Db): Promise<{ total: number; byCollection: Counts }> {
  const s = (await db.admin().serverStatus()) as { metrics?: { document?: Counts }; kairosEmulator?: { documentsWritten?: Counts } };
  const d = s.metrics?.document ?? {};
  const byCollection: Counts = {};
  for (const [ns, n] of Object.entries(s.kairosEmulator?.documentsWritten ?? {})) {
    if (ns.startsWith(`${db.databaseName}.`)) byCollection[ns.slice(db.databaseName.length + 1)] = n;
  }
  return { total: (d.inserted ?? 0) + (d.updated ?? 0) + (d.deleted ?? 0), byCollection };
}

export function diffCounts(a: Counts, b: Counts): Counts {
  const out: Counts = {};
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const d = (b[k] ?? 0) - (a[k] ?? 0);
    if (d > 0) out[k] = d;
  }
  return out;
}

/** "12.0 Redis commands/run (evalsha 3.0, publish 3.0, …)", largest first; commands under 0.05/run dropped. */
export function perRun(what: string, d: Counts, runs: number, skip: string[] = []): string {
  const n = Math.max(1, runs);
  const entries = Object.entries(d)
    .filter(([k]) => !skip.includes(k))
    .map(([k, v]) => [k, v / n] as const)
    .filter(([, v]) => v >= 0.05)
    .sort((x, y) => y[1] - x[1]);
  const total = entries.reduce((s, [, v]) => s + v, 0);
  return `${total.toFixed(1)} ${what}/run (${entries.map(([k, v]) => `${k} ${v.toFixed(1)}`).join(", ")})`;
}

/** Commands that are the counting itself, or connection housekeeping, not the system's work. */
export const REDIS_HOUSEKEEPING = ["info", "client|setname", "client|setinfo", "select", "ping", "hello", "config|get", "command|docs", "quit"];
