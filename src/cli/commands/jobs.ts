/** `kairos apply`, `get`, `describe`, `pause`, `resume`, `trigger`, `delete`, `cancel`, `retry`. */
import type { Command } from "commander";
import {
  CliCancelRunDocument,
  CliDeleteJobDocument,
  CliDescribeJobDocument,
  CliPauseJobDocument,
  CliResumeJobDocument,
  CliRetryRunDocument,
  CliRunDocument,
  CliRunsDocument,
  CliTriggerJobDocument,
  type CliRunFieldsFragment,
  type RunStatus,
} from "../../../generated/client/graphql.js";
import { execute, plan, renderPlan } from "../apply.js";
import type { Ctx } from "../context.js";
import { listFiles, loadDocuments } from "../documents.js";
import { CliError, EXIT, EXIT_CODES_HELP } from "../errors.js";
import { followRun } from "../follow.js";
import { emit, humanMs, paint, parseFormat, relative, statusColour, table } from "../output.js";
import { listNodes, nodeStatuses } from "../nodes.js";
import { wholeNumberFlag } from "../numbers.js";
import { findJob, listOwnDags, listOwnJobs, runNotFound } from "../resolve.js";
import { connectionOptions, example, OUTPUT_FLAG } from "./common.js";

const RUN_STATUSES = ["PENDING", "SCHEDULED", "QUEUED", "RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "CANCELLING", "CANCELLED", "WITHDRAWN", "RETRY_SCHEDULED", "DEAD"];
/** The statuses a job's last run can have (Job.lastRun): the final ones. */
const LAST_RUN_STATUSES = ["SUCCEEDED", "FAILED", "TIMED_OUT", "CANCELLED", "DEAD"];

/** `--last-run FAILED,TIMED_OUT` checked. */
function lastRunStatuses(value: string | undefined): RunStatus[] | undefined {
  if (value === undefined) return undefined;
  const list = value.split(",").map((s) => s.trim().toUpperCase()).filter(Boolean);
  const wrong = list.find((s) => !LAST_RUN_STATUSES.includes(s));
  if (list.length === 0 || wrong) {
    const what = wrong ? `"${wrong}" is not a status a last run ends with` : "no status given";
    throw new CliError(`--last-run: ${what}: give one or more of ${LAST_RUN_STATUSES.join(", ")}, separated by commas (a job's last run is its latest run that has ended)`);
  }
  return list as RunStatus[];
}

/** A job's last run in a table cell: its status and when it ended. */
function lastRunCell(ctx: Ctx, last: { status: RunStatus; finishedAt?: string | null } | null | undefined, now: number): string {
  if (!last) return "-";
  return `${paint(ctx.io, statusColour(last.status), last.status)} ${relative(last.finishedAt ?? null, now)}`;
}

export function runRows(ctx: Ctx, runs: CliRunFieldsFragment[]): string {
  const now = ctx.io.now();
  return table(
    ["RUN", "JOB", "STATUS", "ATTEMPT", "TRIGGER", "STARTED", "DURATION", "EXIT"],
    runs.map((r) => [
      r.id,
      r.jobName,
      paint(ctx.io, statusColour(r.status), r.status),
      `${r.attempt}/${r.maxAttempts}`,
      r.trigger,
      relative(r.startedAt ?? r.queuedAt ?? r.scheduledFor, now),
      humanMs(r.durationMs),
      r.exitCode == null ? (r.signal ?? "-") : String(r.exitCode),
    ]),
  );
}


export function registerJobs(program: Command, ctx: Ctx): void {
  connectionOptions(
    program
      .command("apply")
      .description("create or update the jobs and DAGs in files to match them (matched by name among yours)")
      .requiredOption("-f, --file <path...>", "a YAML or JSON file, or a folder of them (one or many documents a file)")
      .option("--dry-run", "print what would change, field by field, and change nothing")
      .option("--prune", "also delete your jobs and DAGs that no file names")
      .option("--allow-empty", "with --prune: go on when the files hold no job or DAG at all (and so delete every one of yours)")
      .option(...OUTPUT_FLAG),
  )
    .addHelpText(
      "after",
      example("kairos apply -f jobs/", "kairos apply -f jobs/ --dry-run", "kairos apply -f jobs/ -f dags/etl.yaml --prune") +
        `\nEach document is a CreateJobInput as the API takes it; one with "tasks" is a CreateDagInput.\nEditors can check them against schemas/kairos.schema.json (kairos schema json).\nA second apply of the same files prints "no changes" and exits 0.\nExit codes: 0 done (or nothing to do), 1 invalid files or a change the API refused, 2 usage or API error.`,
    )
    .action(async (opts: { file: string[]; dryRun?: boolean; prune?: boolean; allowEmpty?: boolean; output: string }) => {
      const format = parseFormat(opts.output);
      const docs = await loadDocuments(await listFiles(opts.file));
      const planned = await plan(ctx, docs, { prune: Boolean(opts.prune) });
      // No document read at all is most often a wrong path (an empty folder, files of another
      // extension): with --prune it deleted every job and DAG of the caller's, at once.
      const deletes = planned.filter((p) => p.action === "delete").length;
      if (docs.length === 0 && deletes > 0 && !opts.allowEmpty) {
        throw new CliError(
          `${opts.file.join(", ")} hold${opts.file.length === 1 ? "s" : ""} no job or DAG (a wrong path? only *.yaml, *.yml and *.json files of a folder are read): with --prune that would delete every job and DAG of yours (${deletes}). ` +
            `Nothing was changed; add --allow-empty if that is what you mean`,
        );
      }
      const data = planned.map(({ kind, name, id, action, changes, source }) => ({ kind, name, id, action, changes, source }));
      if (opts.dryRun || format !== "table") {
        if (opts.dryRun) {
          emit(ctx.io, format, data, () => renderPlan(ctx.io, planned, true));
          return;
        }
      }
      if (format === "table") ctx.io.out(renderPlan(ctx.io, planned, true));
      const problems = await execute(ctx, planned, { toStderr: format !== "table" });
      if (format !== "table") emit(ctx.io, format, data, () => "");
      if (problems.length) {
        throw new CliError(problems.join("\n"), EXIT.FAILED);
      }
    });

  connectionOptions(
    program
      .command("get")
      .description("list your jobs, DAGs, a job's runs, or the executor nodes")
      .argument("<what>", "jobs, dags, runs or nodes")
      .option("--job <name|id>", "runs: only this job's runs (default: all your runs, across jobs and DAG tasks)")
      .option("--status <status>", `runs: only this status (${RUN_STATUSES.join(", ")}); nodes: only these states (ONLINE, DRAINING, OFFLINE, DEAD, or live, gone; several separated by commas)`)
      .option("--pool <pool>", "nodes: only those that pull from this pool")
      .option("--last-run <statuses>", `jobs: only those whose last run ended so (${LAST_RUN_STATUSES.join(", ")}; several separated by commas)`)
      .option("--limit <n>", "runs: at most this many, newest first", "20")
      .option(...OUTPUT_FLAG),
  )
    .addHelpText("after", example("kairos get jobs", "kairos get jobs --last-run FAILED,TIMED_OUT,DEAD", "kairos get jobs -o json | jq -r '.[].name'", "kairos get runs --status RUNNING", "kairos get runs --job nightly --status FAILED", "kairos get nodes -o yaml", "kairos get nodes --pool gpu --status live"))
    .action(async (what: string, opts: { job?: string; status?: string; pool?: string; lastRun?: string; limit: string; output: string }) => {
      const format = parseFormat(opts.output);
      const api = await ctx.api();
      const now = ctx.io.now();
      switch (what) {
        case "job":
        case "jobs": {
          const jobs = await listOwnJobs(ctx, { lastRunStatus: lastRunStatuses(opts.lastRun) });
          emit(ctx.io, format, jobs, () =>
            table(
              ["NAME", "STATUS", "SCHEDULE", "NEXT FIRE", "LAST RUN", "ID"],
              jobs.map((j) => [
                j.name,
                paint(ctx.io, statusColour(j.paused ? "PAUSED" : j.status), j.paused ? "PAUSED" : j.status),
                j.schedule.description,
                relative(j.nextFireAt, now),
                lastRunCell(ctx, j.lastRun, now),
                j.id,
              ]),
            ),
          );
          return;
        }
        case "dag":
        case "dags": {
          const dags = await listOwnDags(ctx);
          emit(ctx.io, format, dags, () =>
            table(
              ["NAME", "PAUSED", "VERSION", "NEXT FIRE", "ID"],
              dags.map((d) => [d.name, d.paused ? "yes" : "no", String(d.version), relative(d.nextFireAt, now), d.id]),
            ),
          );
          return;
        }
        case "run":
        case "runs": {
          if (opts.status?.includes(",")) throw new CliError(`--status: runs are listed by one status at a time (got "${opts.status}"); run kairos get runs once per status`);
          if (opts.status !== undefined && !RUN_STATUSES.includes(opts.status.toUpperCase())) throw new CliError(`--status: "${opts.status}" is not one of ${RUN_STATUSES.join(", ")}`);
          const limit = wholeNumberFlag("--limit", opts.limit, 1, 100);
          const jobId = opts.job !== undefined ? (await findJob(ctx, opts.job)).id : null;
          const page = await api.request(CliRunsDocument, { jobId, first: limit, ...(opts.status ? { status: opts.status.toUpperCase() as RunStatus } : {}) });
          const runs = page.runs.edges.map((e) => e.node);
          emit(ctx.io, format, runs, () => runRows(ctx, runs));
          return;
        }
        case "node":
        case "nodes": {
          const nodes = await listNodes(ctx, { pool: opts.pool, status: nodeStatuses(opts.status) });
          emit(ctx.io, format, nodes, () =>
            table(
              ["NAME", "STATUS", "POOLS", "RUNNING", "HEARTBEAT", "ID"],
              nodes.map((n) => [n.name, paint(ctx.io, statusColour(n.status), n.status), n.pools.join(","), `${n.running}/${n.capacity.slots}`, relative(n.lastHeartbeatAt, now), n.id]),
            ),
          );
          return;
        }
        default:
          throw new CliError(`get: "${what}" is not one of jobs, dags, runs, nodes`);
      }
    });

  connectionOptions(
    program
      .command("describe")
      .description("a job in detail: its schedule in words, next fires, recent runs, the fire ledger's last outcomes")
      .argument("<what>", "job or run")
      .argument("<ref>", "the job's name or id, or the run's id")
      .option("--fires <n>", "how many next fires", "5")
      .option(...OUTPUT_FLAG),
  )
    .addHelpText("after", example("kairos describe job nightly-report", "kairos describe run 6650c1f2e4b0a1b2c3d4e5f6 -o json"))
    .action(async (what: string, ref: string, opts: { fires: string; output: string }) => {
      const format = parseFormat(opts.output);
      const api = await ctx.api();
      const now = ctx.io.now();
      if (what === "run") {
        const { run } = await runNotFound(ref, () => api.request(CliRunDocument, { id: ref }));
        emit(ctx.io, format, run, () => {
          const lines = [
            `Run:        ${run.id}`,
            `Job:        ${run.jobName} (${run.jobId})`,
            `Status:     ${paint(ctx.io, statusColour(run.status), run.status)}${run.exitCode != null ? ` (exit code ${run.exitCode})` : ""}${run.error ? `: ${run.error}` : ""}`,
            `Attempt:    ${run.attempt} of ${run.maxAttempts}`,
            `Trigger:    ${run.trigger}, scheduled for ${run.scheduledFor}`,
            `Started:    ${run.startedAt ?? "-"}   Finished: ${run.finishedAt ?? "-"}   Took: ${humanMs(run.durationMs)}`,
            `Node:       ${run.node ? `${run.node.name} (${run.nodeId})` : (run.nodeId ?? "-")} (pool ${run.pool})`,
            "",
            "History:",
            ...run.history.map((h) => `  ${h.at}  ${h.status.padEnd(16)}${h.attempt != null ? ` attempt ${h.attempt}` : ""}${h.reason ? `  ${h.reason}` : ""}`),
          ];
          return `${lines.join("\n")}\n`;
        });
        return;
      }
      if (what !== "job") throw new CliError(`describe: "${what}" is not one of job, run (DAGs: kairos dag describe)`);
      const fires = wholeNumberFlag("--fires", opts.fires, 1, 100);
      const found = await findJob(ctx, ref);
      const { job } = await api.request(CliDescribeJobDocument, { id: found.id, fires, runs: 5, ledger: 5 });
      const runs = job.runs.edges.map((e) => e.node);
      const ledger = job.fires.edges.map((e) => e.node);
      emit(ctx.io, format, { ...job, runs, fires: ledger }, () => {
        const lines = [
          `Name:       ${job.name}`,
          `ID:         ${job.id}`,
          `Status:     ${paint(ctx.io, statusColour(job.paused ? "PAUSED" : job.status), job.paused ? "PAUSED" : job.status)}`,
          ...(job.description ? [`About:      ${job.description}`] : []),
          `Schedule:   ${job.schedule.description}`,
          `Runs:       ${job.spec.kind === "COMMAND" ? (job.spec.command ?? job.spec.argv?.join(" ")) : job.spec.kind} (pool ${job.spec.pool}, timeout ${job.spec.timeout})`,
          `Policies:   overlap ${job.overlap}, misfire ${job.misfire}, ${job.retry.maxAttempts > 1 ? `retry up to ${job.retry.maxAttempts} attempts` : "no retries"}, priority ${job.priority}`,
          ...(job.tags.length ? [`Tags:       ${job.tags.join(", ")}`] : []),
          `Fired:      ${job.firedCount} time${job.firedCount === 1 ? "" : "s"}${job.lastSlotAt ? `, last slot ${job.lastSlotAt}` : ""}`,
          "",
          "Next fires:",
          ...(job.nextFires.length ? job.nextFires.map((f) => `  ${f.at}  ${f.local}  ${relative(f.at, now)}${f.dst ? `  (DST: ${f.dst})` : ""}`) : [job.paused ? "  none while paused" : "  none"]),
          "",
          "Recent runs:",
          ...(runs.length ? runRows(ctx, runs).trimEnd().split("\n").map((l) => `  ${l}`) : ["  none"]),
          "",
          "Fire ledger (last outcomes):",
          ...(ledger.length ? ledger.map((f) => `  ${f.slotAt}  ${paint(ctx.io, statusColour(f.outcome), f.outcome.padEnd(16))}${f.runId ? ` run ${f.runId}` : ""}${f.reason ? `  ${f.reason}` : ""}`) : ["  none"]),
        ];
        if (job.problems.length) {
          lines.push("", "Why it makes no runs now:", ...job.problems.map((p) => `  ${paint(ctx.io, "yellow", p.code.padEnd(24))}${p.message}${p.until ? ` (until ${p.until})` : ""}`));
        }
        const warnings = [...job.warnings, ...job.health.warnings];
        if (warnings.length) lines.push("", "Warnings:", ...[...new Set(warnings)].map((w) => `  ${paint(ctx.io, "yellow", w)}`));
        return `${lines.join("\n")}\n`;
      });
    });

  const jobActions: Array<[string, string, (id: string) => Promise<unknown>]> = [
    ["pause", "paused", async (id) => (await ctx.api()).request(CliPauseJobDocument, { id })],
    ["resume", "resumed", async (id) => (await ctx.api()).request(CliResumeJobDocument, { id })],
  ];
  for (const [name, verb, act] of jobActions) {
    connectionOptions(program.command(name).description(`${name} a job (DAGs: kairos dag ${name})`).argument("<job>", "the job's name or id"))
      .addHelpText("after", example(`kairos ${name} nightly-report`))
      .action(async (ref: string) => {
        const job = await findJob(ctx, ref);
        await act(job.id);
        ctx.io.out(`job ${job.name} ${verb}\n`);
      });
  }

  connectionOptions(program.command("delete").description("delete a job (DAGs: kairos dag delete)").argument("<job>", "the job's name or id"))
    .addHelpText("after", example("kairos delete nightly-report"))
    .action(async (ref: string) => {
      const job = await findJob(ctx, ref);
      await (await ctx.api()).request(CliDeleteJobDocument, { id: job.id });
      ctx.io.out(`job ${job.name} deleted (${job.id})\n`);
    });

  connectionOptions(
    program
      .command("trigger")
      .description("run a job now; with --follow, stream its log and exit with the run's exit code")
      .argument("<job>", "the job's name or id")
      .option("--follow", "stream the run's log and exit with its exit code"),
  )
    .addHelpText("after", example("kairos trigger nightly-report", "kairos trigger nightly-report --follow") + `\n${EXIT_CODES_HELP}\n`)
    .action(async (ref: string, opts: { follow?: boolean }) => {
      const job = await findJob(ctx, ref);
      const { triggerJob: run } = await (await ctx.api()).request(CliTriggerJobDocument, { id: job.id });
      if (!opts.follow) {
        ctx.io.out(`${run.id}\n`);
        return;
      }
      ctx.exitCode = await followRun(ctx, run.id);
    });

  const runActions: Array<[string, string, (id: string) => Promise<CliRunFieldsFragment>]> = [
    ["cancel", "cancel a run (a running one is stopped)", async (id) => (await (await ctx.api()).request(CliCancelRunDocument, { id })).cancelRun],
    ["retry", "run a failed run again (retryRun)", async (id) => (await (await ctx.api()).request(CliRetryRunDocument, { id })).retryRun],
  ];
  for (const [name, help, act] of runActions) {
    connectionOptions(program.command(name).description(help).argument("<run>", "the run's id"))
      .addHelpText("after", example(`kairos ${name} 6650c1f2e4b0a1b2c3d4e5f6`))
      .action(async (ref: string) => {
        const run = await runNotFound(ref, () => act(ref));
        ctx.io.out(`run ${run.id} ${run.status}\n`);
      });
  }
}
