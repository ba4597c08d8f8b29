/** `kairos logs RUN [-f]` and `kairos run -f FILE [--follow]`. */
import type { Command } from "commander";
import { CliCreateJobDocument, CliRunLogsDocument, CliRunsDocument, CliTriggerJobDocument, type CreateJobInput } from "../../../generated/client/graphql.js";
import { execute, plan } from "../apply.js";
import type { Ctx } from "../context.js";
import { listFiles, loadDocuments } from "../documents.js";
import { CliError, EXIT_CODES_HELP } from "../errors.js";
import { followLogs, followRun } from "../follow.js";
import { wholeNumberFlag } from "../numbers.js";
import { runNotFound } from "../resolve.js";
import { connectionOptions, example } from "./common.js";

export function registerFollow(program: Command, ctx: Ctx): void {
  connectionOptions(
    program
      .command("logs")
      .description("print a run's log; with -f, follow it until the run ends (resumed across dropped connections)")
      .argument("<run>", "the run's id")
      .option("-f, --follow", "keep streaming until the run has ended")
      .option("--from <offset>", "start at this byte of the log", "0"),
  )
    .addHelpText("after", example("kairos logs 6650c1f2e4b0a1b2c3d4e5f6", "kairos logs 6650c1f2e4b0a1b2c3d4e5f6 -f") + "\nstdout of the run goes to stdout, its stderr and Kairos's notes to stderr.\n")
    .action(async (runId: string, opts: { follow?: boolean; from: string }) => {
      // A byte offset the API takes (a GraphQL Int): past it, the API's refusal was told as "run not found".
      const from = wholeNumberFlag("--from", opts.from, 0, 2_147_483_647);
      await runNotFound(runId, async () => {
        if (opts.follow) {
          await followLogs(ctx, runId, { fromOffset: from });
          return;
        }
        const api = await ctx.api();
        let offset = from;
        for (;;) {
          const { run } = await api.request(CliRunLogsDocument, { id: runId, offset, limit: 500 });
          if (!run.logs.length) break;
          for (const c of run.logs) {
            if (c.stream === "STDOUT") ctx.io.out(c.data);
            else ctx.io.err(c.data);
            offset = c.offset + c.size;
          }
        }
      });
    });

  connectionOptions(
    program
      .command("run")
      .description("create the job in a file (or update the one of that name) and run it now; --follow streams its log and exits with its exit code")
      .requiredOption("-f, --file <path>", "a YAML or JSON file with one job (a CreateJobInput; its schedule may be left out)")
      .option("--follow", "stream the run's log and exit with its exit code"),
  )
    .addHelpText(
      "after",
      example("kairos run -f hello.yaml --follow", "echo 'name: once\\nspec: {command: \"make test\"}' > t.yaml && kairos run -f t.yaml --follow") +
        `\nA job the server does not have yet is created with its file's schedule (default: ONCE, now) and its\nfirst run is followed; an existing one is updated if its file changed, then triggered.\n\n${EXIT_CODES_HELP}\n`,
    )
    .action(async (opts: { file: string; follow?: boolean }) => {
      const files = await listFiles([opts.file]);
      // A file for `run` may leave the schedule out: it runs once, now.
      const raw = await loadDocuments(files, { defaultSchedule: true });
      if (raw.length !== 1 || raw[0]!.kind !== "job") throw new CliError(`${opts.file}: run takes a file with exactly one job (DAGs: kairos apply, then kairos dag trigger)`);
      const doc = raw[0]!;
      const input = doc.input as CreateJobInput;
      const api = await ctx.api();
      const [planned] = await plan(ctx, [doc], { prune: false });
      let runId: string;
      if (planned!.action === "create") {
        const { createJob } = await api.request(CliCreateJobDocument, { input });
        for (const w of createJob.warnings) ctx.io.err(`warning: job ${createJob.name}: ${w}\n`);
        if (input.schedule.kind !== "ONCE") {
          runId = (await api.request(CliTriggerJobDocument, { id: createJob.id })).triggerJob.id;
        } else {
          runId = await firstRun(ctx, createJob.id);
        }
      } else {
        const problems = await execute(ctx, [planned!], { toStderr: true });
        if (problems.length) throw new CliError(problems.join("\n"), 1);
        runId = (await api.request(CliTriggerJobDocument, { id: planned!.id! })).triggerJob.id;
      }
      if (!opts.follow) {
        ctx.io.out(`${runId}\n`);
        return;
      }
      ctx.exitCode = await followRun(ctx, runId);
    });
}

/** The first run of a job just created (a ONCE job fires by itself). */
async function firstRun(ctx: Ctx, jobId: string): Promise<string> {
  const api = await ctx.api();
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const { runs } = await api.request(CliRunsDocument, { jobId, first: 1 });
    const run = runs.edges[0]?.node;
    if (run) return run.id;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new CliError(`job ${jobId} was created but no run appeared within 60 s (is its schedule in the future? kairos describe job ${jobId})`);
}
