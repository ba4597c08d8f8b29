/** `kairos dag trigger|graph|describe|pause|resume|delete`. */
import type { Command } from "commander";
import { CliDagGraphDocument, CliDeleteDagDocument, CliPauseDagDocument, CliResumeDagDocument, CliTriggerDagDocument } from "../../../generated/client/graphql.js";
import type { Ctx } from "../context.js";
import { CliError } from "../errors.js";
import { followDagRun } from "../follow.js";
import { emit, parseFormat, relative } from "../output.js";
import { findDag } from "../resolve.js";
import { connectionOptions, example, OUTPUT_FLAG } from "./common.js";

interface GraphTask {
  key: string;
  dependsOn: string[];
  trigger: string;
  mapOver: string | null;
}

/**
 * The graph as text: tasks in topological order, by level (a task's level is one more than its
 * deepest parent's), each with what it waits for and how (its trigger rule when not ALL_SUCCESS).
 */
export function textGraph(order: string[], tasks: GraphTask[]): string {
  const byKey = new Map(tasks.map((t) => [t.key, t]));
  const level = new Map<string, number>();
  for (const k of order) {
    const t = byKey.get(k)!;
    level.set(k, t.dependsOn.length ? Math.max(...t.dependsOn.map((d) => level.get(d) ?? 0)) + 1 : 0);
  }
  const children = new Map<string, string[]>();
  for (const t of tasks) for (const d of t.dependsOn) children.set(d, [...(children.get(d) ?? []), t.key]);
  const width = Math.max(...tasks.map((t) => t.key.length));
  const lines: string[] = [];
  const levels = Math.max(0, ...level.values());
  for (let l = 0; l <= levels; l++) {
    const here = order.filter((k) => level.get(k) === l);
    lines.push(`stage ${l + 1}`);
    for (const k of here) {
      const t = byKey.get(k)!;
      const parts: string[] = [];
      if (t.dependsOn.length) parts.push(`after ${t.dependsOn.join(", ")}`);
      if (t.trigger !== "ALL_SUCCESS") parts.push(`when ${t.trigger}`);
      if (t.mapOver) parts.push(`mapped over ${t.mapOver}`);
      const next = children.get(k);
      lines.push(`  ${k.padEnd(width)}${parts.length ? `  <- ${parts.join("; ")}` : ""}${next ? `  -> ${next.join(", ")}` : ""}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

export function registerDag(program: Command, ctx: Ctx): void {
  const dag = program.command("dag").description("DAG workflows: trigger (and follow), graph, describe, pause, resume, delete");
  dag.addHelpText("after", example("kairos dag trigger etl --follow", "kairos dag graph etl", "kairos dag graph etl --format mermaid"));

  connectionOptions(
    dag
      .command("trigger")
      .description("start a DAG run now; with --follow, print each task's transitions until it ends")
      .argument("<dag>", "the DAG's name or id")
      .option("--params <json>", "the run's params, a JSON object")
      .option("--follow", "print each task transition; exit 0 if the DAG run succeeded, 1 if it failed, 130 if cancelled"),
  )
    .addHelpText("after", example("kairos dag trigger etl", "kairos dag trigger etl --params '{\"day\":\"2026-01-01\"}' --follow"))
    .action(async (ref: string, opts: { params?: string; follow?: boolean }) => {
      let params: Record<string, unknown> | undefined;
      if (opts.params) {
        try {
          params = JSON.parse(opts.params) as Record<string, unknown>;
        } catch (e) {
          // Where it stops parsing, and what a value looks like (a shell ate the quotes, often).
          throw new CliError(`--params: not valid JSON (${(e as Error).message}); give an object in single quotes, such as --params '{"DEBUG": "1"}'`);
        }
      }
      const d = await findDag(ctx, ref);
      const { triggerDag } = await (await ctx.api()).request(CliTriggerDagDocument, { id: d.id, ...(params ? { params } : {}) });
      if (!opts.follow) {
        ctx.io.out(`${triggerDag.id}\n`);
        return;
      }
      ctx.io.err(`[kairos] DAG run ${triggerDag.id} of ${d.name}\n`);
      ctx.exitCode = await followDagRun(ctx, triggerDag.id);
    });

  connectionOptions(
    dag
      .command("graph")
      .description("print a DAG's graph: as text by stage, or as Mermaid or DOT from the API")
      .argument("<dag>", "the DAG's name or id")
      .option("--format <format>", "text, mermaid or dot", "text"),
  )
    .addHelpText("after", example("kairos dag graph etl", "kairos dag graph etl --format dot | dot -Tsvg > etl.svg"))
    .action(async (ref: string, opts: { format: string }) => {
      const format = opts.format.toLowerCase();
      if (!["text", "mermaid", "dot"].includes(format)) throw new CliError(`--format: "${opts.format}" is not one of text, mermaid, dot`);
      const d = await findDag(ctx, ref);
      const { dag: g } = await (await ctx.api()).request(CliDagGraphDocument, { id: d.id, format: format === "dot" ? "DOT" : "MERMAID" });
      ctx.io.out(format === "text" ? textGraph(g.topologicalOrder, g.tasks) : `${g.graph.trimEnd()}\n`);
    });

  connectionOptions(dag.command("describe").description("a DAG: its schedule, tasks and graph").argument("<dag>", "the DAG's name or id").option(...OUTPUT_FLAG))
    .addHelpText("after", example("kairos dag describe etl", "kairos dag describe etl -o json"))
    .action(async (ref: string, opts: { output: string }) => {
      const format = parseFormat(opts.output);
      const d = await findDag(ctx, ref);
      const { dag: g } = await (await ctx.api()).request(CliDagGraphDocument, { id: d.id });
      emit(ctx.io, format, d, () =>
        [
          `Name:       ${d.name}`,
          `ID:         ${d.id} (version ${d.version})`,
          `Paused:     ${d.paused ? "yes" : "no"}`,
          `Schedule:   ${d.schedule?.description ?? "none (triggered only)"}`,
          `Next fire:  ${d.nextFireAt ?? "-"} ${d.nextFireAt ? `(${relative(d.nextFireAt, ctx.io.now())})` : ""}`,
          `Policies:   overlap ${d.overlap}, misfire ${d.misfire}, failFast ${d.failFast}, maxParallel ${d.maxParallel ?? "none"}`,
          "",
          "Graph:",
          textGraph(g.topologicalOrder, g.tasks).trimEnd().split("\n").map((l) => `  ${l}`).join("\n"),
          ...(d.warnings.length ? ["", "Warnings:", ...d.warnings.map((w) => `  ${w}`)] : []),
          "",
        ].join("\n"),
      );
    });

  const actions: Array<[string, string, (id: string) => Promise<unknown>]> = [
    ["pause", "paused", async (id) => (await ctx.api()).request(CliPauseDagDocument, { id })],
    ["resume", "resumed", async (id) => (await ctx.api()).request(CliResumeDagDocument, { id })],
    ["delete", "deleted", async (id) => (await ctx.api()).request(CliDeleteDagDocument, { id })],
  ];
  for (const [name, verb, act] of actions) {
    connectionOptions(dag.command(name).description(`${name} a DAG`).argument("<dag>", "the DAG's name or id"))
      .addHelpText("after", example(`kairos dag ${name} etl`))
      .action(async (ref: string) => {
        const d = await findDag(ctx, ref);
        await act(d.id);
        ctx.io.out(`dag ${d.name} ${verb}\n`);
      });
  }
}
