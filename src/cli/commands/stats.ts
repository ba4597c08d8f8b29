/**
 * `kairos stats`: the cluster's figures over a window (yours when you are not an administrator),
 * and `kairos forecast`: the runs due per pool over the next hours with the hotspots and what to
 * do about them (issue #31; docs/cluster-stats.md).
 */
import type { Command } from "commander";
import { CliClusterStatsDocument, CliForecastDocument, type CliClusterStatsQuery, type CliForecastQuery } from "../../../generated/client/graphql.js";
import type { Ctx } from "../context.js";
import { fieldFlags } from "../flag-names.js";
import { decimalFlag } from "../numbers.js";
import { emit, humanMs, paint, parseFormat, table } from "../output.js";
import { connectionOptions, example, OUTPUT_FLAG } from "./common.js";

type Stats = CliClusterStatsQuery["clusterStats"];
type Forecast = CliForecastQuery["forecast"];

const OPEN = new Set(["PENDING", "QUEUED", "RUNNING", "RETRY_SCHEDULED"]);
const BARS = " ▁▂▃▄▅▆▇█";

/** The human form of clusterStats. */
export function statsText(s: Stats, color: { color: boolean }): string {
  const counts = (open: boolean) =>
    s.runs
      .filter((r) => OPEN.has(r.status) === open)
      .map((r) => `${r.status} ${r.count}`)
      .join("  ");
  const lines = [
    `${s.scope === "CLUSTER" ? "Cluster" : "Your runs"} over ${s.window}, at ${s.at}`,
    `Now:        ${counts(true)}`,
    `Ended:      ${s.ended} (${s.throughput}/s${s.endedCapped ? ", the newest 100,000 counted" : ""})  ${counts(false)}`,
    `Lateness:   p50 ${humanMs(s.lateness.p50Ms)}  p99 ${humanMs(s.lateness.p99Ms)}  (start − scheduled time, ${s.lateness.samples} runs${s.lateness.capped ? ", the newest" : ""})`,
    `Dead:       ${s.deadLetters} kept, ${s.deadLettersInWindow} in the window`,
    `Capacity:   ${capacityText(s.capacity)}`,
    "",
  ];
  const out = [lines.join("\n")];
  if (s.pools.length > 0) out.push(table(["POOL", "WAITING", "OLDEST WAIT", "OLDEST RUN"], s.pools.map((p) => [p.pool, String(p.depth), humanMs(p.oldestWaitMs), p.oldestRunId ?? "-"])));
  const nodes = s.nodes.edges.map((e) => e.node);
  if (nodes.length > 0) {
    out.push(
      "\n" +
        table(
          ["NODE", "STATUS", "POOLS", "RUNNING", "CPU RESERVED", "MEMORY RESERVED"],
          nodes.map((n) => [n.name, n.status, n.pools.join(","), `${n.running}/${n.slots}`, `${n.allocatedCpu}/${n.cpus}`, `${n.allocatedMemoryMb}/${n.memoryMb} MB`]),
        ),
    );
  }
  if (s.nodes.pageInfo.hasNextPage) out.push(paint(color, "yellow", `showing the first ${nodes.length} of ${s.nodeCount} nodes by name (the capacity above counts them all); kairos get nodes lists every one`) + "\n");
  if (s.schedulers) {
    const unowned = s.unownedShards ?? [];
    out.push("\n" + table(["SCHEDULER", "SHARDS"], s.schedulers.map((m) => [m.id, `${m.shards.length} of ${s.shardCount}: ${ranges(m.shards)}`])));
    if (unowned.length > 0) out.push(paint(color, "red", `${unowned.length} shards held by no scheduler: ${ranges(unowned)}`) + "\n");
  }
  return out.join("");
}

/** The live nodes' capacity and what their runs reserve, summed over all of them. */
function capacityText(c: Stats["capacity"]): string {
  return `${c.nodes} live node${c.nodes === 1 ? "" : "s"}  running ${c.running}/${c.slots}  CPU reserved ${c.allocatedCpu}/${c.cpus}  memory reserved ${c.allocatedMemoryMb}/${c.memoryMb} MB`;
}

/** The human form of forecast: per pool its total, peak and an hour-by-hour bar; the hotspots; the notes. */
export function forecastText(f: Forecast, color: { color: boolean }): string {
  const from = Date.parse(f.from);
  const hours = Math.max(1, Math.ceil((Date.parse(f.to) - from) / 3_600_000));
  const out: string[] = [`${f.scope === "CLUSTER" ? "Cluster" : "Your jobs"}: runs due from ${f.from} to ${f.to} (${f.jobsRead} jobs)\n`];
  if (f.pools.length === 0) out.push("No runs due.\n");
  else {
    out.push(
      table(
        ["POOL", "RUNS", "PEAK MINUTE", "MEDIAN", "EACH HOUR"],
        f.pools.map((p) => {
          const perHour = new Array<number>(hours).fill(0);
          for (const m of p.minutes) perHour[Math.min(hours - 1, Math.floor((Date.parse(m.at) - from) / 3_600_000))] += m.runs;
          const top = Math.max(...perHour, 1);
          const bar = perHour.map((n) => BARS[n === 0 ? 0 : Math.max(1, Math.round((n / top) * (BARS.length - 1)))]).join("");
          return [p.pool, String(p.total), `${p.peak} at ${p.peakAt ?? "-"}`, String(p.median), bar];
        }),
      ),
    );
  }
  for (const h of f.hotspots) {
    const shown = h.jobIds.slice(0, 5).join(", ");
    const more = h.jobCount > 5 ? ` and ${h.jobCount - 5} more` : "";
    out.push(`\n${paint(color, "yellow", "hotspot")} ${h.pool} at ${h.at} (${h.minutes.length} minute${h.minutes.length === 1 ? "" : "s"} in the window): ${h.suggestion}\n  jobs: ${shown}${more}\n`);
  }
  for (const n of f.notes) out.push(`\nnote: ${n}\n`);
  return out.join("");
}

/** 0,1,2,3,7,8 → "0-3,7-8". */
function ranges(ns: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < ns.length; ) {
    let j = i;
    while (j + 1 < ns.length && ns[j + 1] === ns[j] + 1) j++;
    out.push(j === i ? String(ns[i]) : `${ns[i]}-${ns[j]}`);
    i = j + 1;
  }
  return out.join(",") || "-";
}

export function registerStats(program: Command, ctx: Ctx): void {
  connectionOptions(
    program
      .command("stats")
      .description("the cluster's figures over a window: runs by status, throughput, lateness, queues, nodes, dead letters, schedulers (yours only unless you are an administrator)")
      .option("--window <duration>", "PT1M to PT24H", "PT1H")
      .option(...OUTPUT_FLAG),
  )
    .addHelpText("after", example("kairos stats", "kairos stats --window PT24H", "kairos stats -o json"))
    .action(async (opts: { window: string; output: string }) => {
      const format = parseFormat(opts.output);
      const api = await ctx.api();
      const { clusterStats } = await api.request(CliClusterStatsDocument, { window: opts.window });
      emit(ctx.io, format, clusterStats, () => statsText(clusterStats, ctx.io));
    });

  const forecast = connectionOptions(
    program
      .command("forecast")
      .description("runs due per pool over the next hours from the schedules (yours; an administrator's: the cluster's), with the minutes where too many jobs meet and how to spread them")
      .option("--within <duration>", "PT1M to PT24H", "PT24H")
      .option("--pool <name>", "one pool only")
      .option("--factor <n>", "a hotspot holds more than this × the pool's median minute (default 10)")
      .option("--min-runs <n>", "…and at least this many runs (default 50)")
      .option(...OUTPUT_FLAG),
  );
  // The API's names for --factor and --min-runs (flag-names.ts): its range checks name the flags.
  fieldFlags(forecast, { hotspotFactor: "--factor", hotspotMinRuns: "--min-runs" })
    .addHelpText("after", example("kairos forecast", "kairos forecast --within PT6H --pool gpu", "kairos forecast --min-runs 20 -o json"))
    .action(async (opts: { within: string; pool?: string; factor?: string; minRuns?: string; output: string }) => {
      const format = parseFormat(opts.output);
      const vars = { within: opts.within, pool: opts.pool, hotspotFactor: decimalFlag("--factor", opts.factor, false), hotspotMinRuns: decimalFlag("--min-runs", opts.minRuns, true) };
      const api = await ctx.api();
      const { forecast } = await api.request(CliForecastDocument, vars);
      emit(ctx.io, format, forecast, () => forecastText(forecast, ctx.io));
    });
}
