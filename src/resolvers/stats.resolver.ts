/** clusterStats, clusterStatsUpdated and forecast (issue #31): thin, over core's ClusterStats, its feed and ForecastService. */
import { Arg, Ctx, FieldResolver, Float, Int, Query, Resolver, Root, Subscription } from "type-graphql";
import type { SubscribeResolverData } from "type-graphql";
import { statsWindowMs, type ClusterFigures, type Forecast as ForecastFigures, type NodeFigures } from "../core/index.js";
import { formatDuration } from "../timing/index.js";
import { ClusterStats, Forecast, NodeFilter, NodeFiguresConnection } from "../schema/index.js";
import { requireUser, type Context } from "./context.js";
import { logRefusal, toGraphQLError } from "./errors.js";
import { countedStream, eventStream } from "./event-stream.js";
import { mapPage, pageArgs } from "./pagination.js";

const WINDOW_HELP = "An ISO-8601 duration from PT1M to PT24H.";

function toClusterStats(f: ClusterFigures): ClusterStats {
  return { ...f, window: formatDuration(f.windowMs), throughput: Math.round(f.throughputPerSecond * 1000) / 1000 };
}

function toNodeFigures({ node, allocated }: NodeFigures) {
  return {
    id: node._id,
    name: node.name,
    status: node.status,
    pools: node.pools,
    slots: node.capacity.slots,
    running: node.running,
    cpus: node.capacity.cpus,
    memoryMb: node.capacity.memoryMb,
    allocatedCpu: allocated.cpu,
    allocatedMemoryMb: allocated.memoryMb,
  };
}

function toForecast(f: ForecastFigures): Forecast {
  return {
    ...f,
    hotspots: f.hotspots.map((h) => ({ ...h, at: new Date(h.at), minutes: h.minutes.map((m) => new Date(m)), suggestedSpread: formatDuration(h.suggestedSpreadMs) })),
  };
}

/** Checks the caller and the window before a figure flows; counted like the event subscriptions. */
async function subscribeClusterStats({ args, context }: SubscribeResolverData<unknown, { window: string }, Context>) {
  try {
    const p = requireUser(context);
    const windowMs = statsWindowMs(args.window);
    const feed = context.services.statsFeed;
    return countedStream(context.services.events, p, () =>
      eventStream<ClusterFigures>(async (push) => {
        const stop = feed.subscribe(p, windowMs, (f) => push(f));
        return stop;
      }, 2),
    );
  } catch (e) {
    logRefusal(context, "Subscription.clusterStatsUpdated", e, args as Record<string, unknown>);
    throw toGraphQLError(e) ?? e;
  }
}

@Resolver(() => ClusterStats)
export class StatsResolver {
  @Query(() => ClusterStats, {
    description:
      "The cluster's figures over the window (administrators): runs by status, throughput, start lateness p50/p99, queue depth and oldest wait per pool, nodes' capacity and allocation, dead letters, schedulers and their shards. " +
      "Others get the same figures over their own runs, the nodes, and no schedulers (docs/cluster-stats.md).",
  })
  async clusterStats(@Ctx() ctx: Context, @Arg("window", () => String, { defaultValue: "PT1H", description: WINDOW_HELP }) window: string): Promise<ClusterStats> {
    const p = requireUser(ctx);
    return toClusterStats(await ctx.services.clusterStats.get(p, statsWindowMs(window)));
  }

  @Subscription(() => ClusterStats, {
    description: "clusterStats every 5 seconds (and at once), computed once for all subscribers of the same scope and window.",
    subscribe: subscribeClusterStats,
  })
  clusterStatsUpdated(@Root() figures: ClusterFigures, @Arg("window", () => String, { defaultValue: "PT1H", description: WINDOW_HELP }) _window: string): ClusterStats {
    return toClusterStats(figures);
  }

  @FieldResolver(() => NodeFiguresConnection, {
    description:
      "The nodes (any signed-in user sees them) with their capacity and what their runs reserve, a page at a time: the `nodes` query's order (by name, the latest start of a name first, then by id), filter and cursors. " +
      "nodeCount counts every node and capacity sums every live one, whichever page is read. In clusterStatsUpdated each push carries the page asked for, read again.",
  })
  async nodes(
    @Root() _figures: ClusterStats,
    @Ctx() ctx: Context,
    @Arg("filter", () => NodeFilter, { nullable: true }) filter?: NodeFilter | null,
    @Arg("first", () => Int, { nullable: true, description: "1–100, default 20." }) first?: number | null,
    @Arg("after", () => String, { nullable: true }) after?: string | null,
  ): Promise<NodeFiguresConnection> {
    const page = pageArgs(first, after);
    const match = { pool: filter?.pool ?? null, status: filter?.status ?? null, namePrefix: filter?.namePrefix ?? null };
    return mapPage(await ctx.services.clusterStats.nodes(match, page), toNodeFigures);
  }

  @Query(() => Forecast, {
    description:
      "Runs due per minute and pool over the next `within` (PT1M to PT24H), from the armed timers and schedules of your active jobs and DAGs (administrators: everyone's), " +
      "with warnings about minutes that hold far more runs than the pool's median and a suggestion to spread them. At most 10,000 jobs are read: `jobsCapped` and `notes` say when more were due.",
  })
  async forecast(
    @Ctx() ctx: Context,
    @Arg("within", () => String, { defaultValue: "PT24H" }) within: string,
    @Arg("pool", () => String, { nullable: true, description: "One pool's runs only." }) pool?: string | null,
    @Arg("hotspotFactor", () => Float, { nullable: true, description: "A hotspot holds more than this × the pool's median minute (default 10, 1 to 1000)…" }) hotspotFactor?: number | null,
    @Arg("hotspotMinRuns", () => Int, { nullable: true, description: "…and at least this many runs (default 50)." }) hotspotMinRuns?: number | null,
  ): Promise<Forecast> {
    const p = requireUser(ctx);
    return toForecast(await ctx.services.forecast.forecast(p, { within, pool, hotspotFactor, hotspotMinRuns }));
  }
}
