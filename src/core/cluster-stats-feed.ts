/**
 * The clusterStatsUpdated feed: one loop per API process (support/periodic.ts, fixed rate) computes
 * each (scope, window) that some subscriber asked for once a pass and pushes the result to all of
 * them, so a hundred subscribers cost what one does. The loop runs only while someone subscribes.
 */
import type { Principal } from "../auth/index.js";
import { listedOwner } from "../auth/index.js";
import { coerceError } from "../domain/index.js";
import { Periodic, type Logger } from "../support/index.js";
import type { ClusterFigures, ClusterStats } from "./cluster-stats.js";

/** How often the feed pushes. */
export const STATS_FEED_EVERY_MS = 5_000;

interface Listener {
  caller: Principal;
  windowMs: number;
  push: (figures: ClusterFigures) => void;
}

export class ClusterStatsFeed {
  private readonly listeners = new Set<Listener>();
  private readonly loop: Periodic;

  constructor(
    private readonly deps: { stats: ClusterStats; log: Logger; everyMs?: number },
  ) {
    this.loop = new Periodic(() => this.pass(), {
      everyMs: deps.everyMs ?? STATS_FEED_EVERY_MS,
      cadence: "fixed-rate",
      log: deps.log,
      failure: "cluster figures for clusterStatsUpdated failed; trying again next time",
      unref: true,
    });
  }

  /** Pushes `caller`'s figures over `windowMs` now and at every pass, until the returned function is called. */
  subscribe(caller: Principal, windowMs: number, push: (figures: ClusterFigures) => void): () => Promise<void> {
    const l: Listener = { caller, windowMs, push };
    this.listeners.add(l);
    this.loop.start();
    // The first figures at once (the cache makes this free when another subscriber just had them).
    void this.deps.stats.get(caller, windowMs).then(
      (f) => this.listeners.has(l) && push(f),
      (e: unknown) => this.deps.log.warn({ err: coerceError(e) }, "cluster figures for a new clusterStatsUpdated subscription failed"),
    );
    return async () => {
      this.listeners.delete(l);
      if (this.listeners.size === 0) await this.loop.stop();
    };
  }

  get subscribers(): number {
    return this.listeners.size;
  }

  async stop(): Promise<void> {
    this.listeners.clear();
    await this.loop.stop();
  }

  /** One computation per distinct (scope, window), pushed to each of its listeners. */
  private async pass(): Promise<void> {
    const groups = new Map<string, Listener[]>();
    for (const l of this.listeners) {
      const key = `${listedOwner(l.caller) ?? "*"}|${l.windowMs}`;
      const g = groups.get(key);
      if (g) g.push(l);
      else groups.set(key, [l]);
    }
    await Promise.all(
      [...groups.values()].map(async (g) => {
        const figures = await this.deps.stats.get(g[0].caller, g[0].windowMs);
        for (const l of g) if (this.listeners.has(l)) l.push(figures);
      }),
    );
  }
}
