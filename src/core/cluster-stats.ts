/**
 * clusterStats (issue #31): the cluster's figures over a window, read cheaply — every figure an
 * index count, a bounded read, or what the shared state already holds (the ready queues' sizes, as
 * the `kairos_queue_depth` gauge reads them; the shard leases). docs/cluster-stats.md.
 *
 * An administrator sees the cluster. Anyone else sees the same figures over their own runs (their
 * runs by status, throughput, lateness, their waiting runs per pool, their dead letters), the
 * nodes (already visible to every user through `nodes`), and no schedulers (null).
 *
 * The nodes one by one are a page (`nodes(first, after)`, node-figures.ts), in the order and with
 * the cursors of the `nodes` query; the figures hold the totals over every node (`nodeCount`,
 * `capacity`).
 *
 * One result per (caller's scope, window) is kept for CACHE_MS, so many callers polling at once
 * (or the subscription feed, cluster-stats-feed.ts) cost one computation.
 */
import { listedOwner, type Principal } from "../auth/index.js";
import { OPEN_STATUSES, RunStatus, TERMINAL_STATUSES, ValidationError } from "../domain/index.js";
import type { Clock, SharedState } from "../shared-state/index.js";
import {
  countEndedSince,
  countOwnerEndedSince,
  countRunsInStatus,
  findEndedStarts,
  findOldestWaiting,
  findOwnerWaiting,
  findWaitingPools,
  nodeTotalsByStatus,
  servedPools,
  type Mongo,
  type NodeListing,
  type Page,
  type PageQuery,
  type StatsOwner,
} from "../store/index.js";
import { HOUR, MINUTE, parseDuration } from "../timing/index.js";
import { allocatedOnLiveNodes } from "./allocations.js";
import { NodeFigurePages, type NodeFigures } from "./node-figures.js";

/** The window's bounds: a minute to a day. */
export const MIN_STATS_WINDOW_MS = MINUTE;
export const MAX_STATS_WINDOW_MS = 24 * HOUR;
/** Runs whose start lateness is sampled (the newest ended in the window). */
export const LATENESS_SAMPLE = 10_000;
/** A user's ended runs read for their counts by status (an administrator's are index counts). */
export const OWNER_ENDED_READ = 100_000;
/** Pools listed (those with waiting runs, served by nodes, or configured). */
export const MAX_STATS_POOLS = 200;
/** A user's waiting runs read for their per-pool depth and oldest wait. */
export const OWNER_WAITING_READ = 10_000;
/** How long one computed result serves every caller of the same scope and window. */
export const CACHE_MS = 2_000;

export interface StatusCount {
  status: RunStatus;
  count: number;
}

export interface PoolFigures {
  pool: string;
  /** Runs waiting in the pool (everyone's: the ready queue's size, staged included; a user's: their QUEUED runs). */
  depth: number;
  /** How long its oldest waiting run has waited (null: none waiting); staged runs count from their time. */
  oldestWaitMs: number | null;
  oldestRunId: string | null;
}

/** Every live (ONLINE or DRAINING) node's capacity and what its runs reserve, summed over all of them. */
export interface CapacityFigures {
  nodes: number;
  slots: number;
  running: number;
  cpus: number;
  memoryMb: number;
  allocatedCpu: number;
  allocatedMemoryMb: number;
}

export interface SchedulerFigures {
  id: string;
  shards: number[];
}

export interface ClusterFigures {
  at: Date;
  windowMs: number;
  /** CLUSTER: everyone's runs (an administrator); OWN: the caller's. */
  scope: "CLUSTER" | "OWN";
  /** Open statuses: runs in them now; final statuses: runs that ended in them within the window. */
  runs: StatusCount[];
  ended: number;
  /** A user's ended runs were read up to OWNER_ENDED_READ and there were more: the counts are the newest ones'. */
  endedCapped: boolean;
  throughputPerSecond: number;
  lateness: { p50Ms: number | null; p99Ms: number | null; samples: number; capped: boolean };
  pools: PoolFigures[];
  /** Every node, whatever its status. */
  nodeCount: number;
  capacity: CapacityFigures;
  /** DEAD runs kept (within the run retention), and those that died within the window. */
  deadLetters: number;
  deadLettersInWindow: number;
  /** Administrators only (null for others). */
  schedulers: SchedulerFigures[] | null;
  shardCount: number | null;
  unownedShards: number[] | null;
}

export interface ClusterStatsDeps {
  mongo: Mongo;
  state: SharedState;
  clock: Clock;
  /** KAIROS_SHARDS. */
  shards: number;
  /** Pools configured for this deployment (listed even when idle). */
  pools: readonly string[];
}

/** The window as a duration: a minute to a day (BAD_USER_INPUT otherwise, saying what was wrong). */
export function statsWindowMs(raw: string): number {
  const ms = parseDuration(raw, "window");
  if (ms < MIN_STATS_WINDOW_MS || ms > MAX_STATS_WINDOW_MS) {
    throw new ValidationError("window", `must be from PT1M to PT24H (got "${raw}")`);
  }
  return ms;
}

/** The value at percentile `p` (0–100) of `sorted` (ascending), nearest rank; null when empty. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export class ClusterStats {
  private readonly cache = new Map<string, { at: number; value: Promise<ClusterFigures> }>();
  /** Figures computed so far (not served from the cache): what the feed's sharing saves shows here. */
  computations = 0;
  private readonly nodePages: NodeFigurePages;

  constructor(private readonly deps: ClusterStatsDeps) {
    this.nodePages = new NodeFigurePages({ mongo: deps.mongo, clock: deps.clock, cacheMs: CACHE_MS });
  }

  /** A page of the nodes (any signed-in user sees them) with what their runs reserve: node-figures.ts. */
  nodes(match: NodeListing, page: PageQuery): Promise<Page<NodeFigures>> {
    return this.nodePages.page(match, page);
  }

  /** The figures `caller` may see over the last `windowMs` (see the file's comment). */
  get(caller: Principal, windowMs: number): Promise<ClusterFigures> {
    const owner = listedOwner(caller);
    const key = `${owner ?? "*"}|${windowMs}`;
    const now = this.deps.clock();
    const hit = this.cache.get(key);
    if (hit && now - hit.at < CACHE_MS) return hit.value;
    if (this.cache.size > 1_000) for (const [k, v] of this.cache) if (now - v.at >= CACHE_MS) this.cache.delete(k);
    const value = this.compute(owner, windowMs, now);
    this.cache.set(key, { at: now, value });
    // A failed computation is not kept.
    value.catch(() => this.cache.get(key)?.value === value && this.cache.delete(key));
    return value;
  }

  private async compute(owner: StatsOwner, windowMs: number, now: number): Promise<ClusterFigures> {
    this.computations++;
    const { mongo } = this.deps;
    const since = new Date(now - windowMs);
    const [open, ended, lateness, pools, nodes, deadLetters, schedulers] = await Promise.all([
      Promise.all(OPEN_STATUSES.map(async (status) => ({ status, count: await countRunsInStatus(mongo, owner, status) }))),
      this.ended(owner, since),
      this.lateness(owner, since),
      owner === null ? this.clusterPools(now) : this.ownerPools(owner, now),
      this.nodeTotals(),
      countRunsInStatus(mongo, owner, RunStatus.DEAD),
      owner === null ? this.schedulers(now) : Promise.resolve(null),
    ]);
    const endedTotal = ended.counts.reduce((s, c) => s + c.count, 0);
    return {
      at: new Date(now),
      windowMs,
      scope: owner === null ? "CLUSTER" : "OWN",
      runs: [...open, ...ended.counts],
      ended: endedTotal,
      endedCapped: ended.capped,
      throughputPerSecond: endedTotal / (windowMs / 1000),
      lateness,
      pools,
      ...nodes,
      deadLetters,
      deadLettersInWindow: ended.counts.find((c) => c.status === RunStatus.DEAD)?.count ?? 0,
      schedulers: schedulers?.members ?? null,
      shardCount: owner === null ? this.deps.shards : null,
      unownedShards: schedulers?.unowned ?? null,
    };
  }

  private async ended(owner: StatsOwner, since: Date): Promise<{ counts: StatusCount[]; capped: boolean }> {
    const { mongo } = this.deps;
    if (owner === null) {
      const counts = await Promise.all(TERMINAL_STATUSES.map(async (status) => ({ status, count: await countEndedSince(mongo, status, since) })));
      return { counts, capped: false };
    }
    const { byStatus, read } = await countOwnerEndedSince(mongo, owner, since, OWNER_ENDED_READ);
    return { counts: TERMINAL_STATUSES.map((status) => ({ status, count: byStatus.get(status) ?? 0 })), capped: read >= OWNER_ENDED_READ };
  }

  private async lateness(owner: StatsOwner, since: Date): Promise<ClusterFigures["lateness"]> {
    const runs = await findEndedStarts(this.deps.mongo, owner, since, LATENESS_SAMPLE);
    const late = runs.map((r) => Math.max(0, r.startedAt!.getTime() - r.scheduledFor.getTime())).sort((a, b) => a - b);
    return { p50Ms: percentile(late, 50), p99Ms: percentile(late, 99), samples: late.length, capped: runs.length >= LATENESS_SAMPLE };
  }

  /** Every pool with waiting runs, served or configured: the ready queue's size and the oldest QUEUED run. */
  private async clusterPools(now: number): Promise<PoolFigures[]> {
    const { mongo, state } = this.deps;
    const names = new Set([...this.deps.pools, ...(await servedPools(mongo)), ...(await findWaitingPools(mongo, MAX_STATS_POOLS))]);
    const pools = [...names].sort().slice(0, MAX_STATS_POOLS);
    return Promise.all(
      pools.map(async (pool) => {
        const [depth, oldest] = await Promise.all([state.ready.size(pool), findOldestWaiting(mongo, pool, new Date(now), 100)]);
        return { pool, depth, ...waited(oldest, now) };
      }),
    );
  }

  private async ownerPools(owner: string, now: number): Promise<PoolFigures[]> {
    const runs = await findOwnerWaiting(this.deps.mongo, owner, OWNER_WAITING_READ);
    const byPool = new Map<string, PoolFigures>();
    for (const r of runs) {
      const p = byPool.get(r.pool) ?? { pool: r.pool, depth: 0, oldestWaitMs: null, oldestRunId: null };
      byPool.set(r.pool, p);
      p.depth++;
      const w = waited(r, now);
      if (w.oldestWaitMs !== null && (p.oldestWaitMs === null || w.oldestWaitMs > p.oldestWaitMs)) Object.assign(p, w);
    }
    return [...byPool.values()].sort((a, b) => a.pool.localeCompare(b.pool));
  }

  /** Every node counted and the live ones' capacity and reservations summed (an aggregation, not a list). */
  private async nodeTotals(): Promise<Pick<ClusterFigures, "nodeCount" | "capacity">> {
    const { mongo } = this.deps;
    const [totals, allocated] = await Promise.all([nodeTotalsByStatus(mongo), allocatedOnLiveNodes(mongo)]);
    const capacity: CapacityFigures = { nodes: 0, slots: 0, running: 0, cpus: 0, memoryMb: 0, allocatedCpu: 0, allocatedMemoryMb: 0 };
    for (const t of totals) {
      if (t.status !== "ONLINE" && t.status !== "DRAINING") continue;
      capacity.nodes += t.nodes;
      capacity.slots += t.slots;
      capacity.running += t.running;
      capacity.cpus += t.cpus;
      capacity.memoryMb += t.memoryMb;
    }
    for (const a of allocated.values()) {
      capacity.allocatedCpu += a.cpu;
      capacity.allocatedMemoryMb += a.memoryMb;
    }
    capacity.cpus = Math.round(capacity.cpus * 1000) / 1000;
    capacity.allocatedCpu = Math.round(capacity.allocatedCpu * 1000) / 1000;
    return { nodeCount: totals.reduce((n, t) => n + t.nodes, 0), capacity };
  }

  private async schedulers(now: number): Promise<{ members: SchedulerFigures[]; unowned: number[] }> {
    const { coordinator } = this.deps.state;
    const members = new Map((await coordinator.members(now)).map((id) => [id, [] as number[]]));
    const unowned: number[] = [];
    const shards = Array.from({ length: this.deps.shards }, (_, i) => i);
    const holders = await Promise.all(shards.map((s) => coordinator.holder(s, now)));
    holders.forEach((h, shard) => {
      if (!h) return void unowned.push(shard);
      const list = members.get(h.memberId) ?? [];
      members.set(h.memberId, list);
      list.push(shard);
    });
    return { members: [...members].map(([id, s]) => ({ id, shards: s })).sort((a, b) => a.id.localeCompare(b.id)), unowned };
  }
}

/** A waiting run's wait at `now`: since it was queued, or since its staged time once that passed. */
function waited(run: { _id: string; queuedAt: Date | null; notBefore?: Date | null } | null, now: number): Pick<PoolFigures, "oldestWaitMs" | "oldestRunId"> {
  if (!run) return { oldestWaitMs: null, oldestRunId: null };
  const from = Math.max(run.queuedAt?.getTime() ?? now, run.notBefore?.getTime() ?? 0);
  if (from > now) return { oldestWaitMs: null, oldestRunId: null };
  return { oldestWaitMs: now - from, oldestRunId: run._id };
}
