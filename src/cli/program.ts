/** The command line's program: its commands registered on commander, and one run of it (`runCli`). */
import { Command, CommanderError } from "commander";
import { registerAudit } from "./commands/audit.js";
import { registerAuth } from "./commands/auth.js";
import { registerDag } from "./commands/dag.js";
import { registerFollow } from "./commands/follow.js";
import { registerJobs } from "./commands/jobs.js";
import { registerStats } from "./commands/stats.js";
import { registerTools } from "./commands/tools.js";
import { Ctx, type GlobalOptions } from "./context.js";
import { CliError, EXIT, EXIT_CODES_HELP } from "./errors.js";
import { flagTerms } from "./flag-names.js";
import { processIo, type Io } from "./output.js";

/** The commands this module answers (src/main.ts starts roles for the rest). */
export const CLI_COMMANDS = ["login", "logout", "whoami", "apply", "get", "describe", "pause", "resume", "trigger", "delete", "cancel", "retry", "logs", "run", "dag", "schedule", "why", "schema", "completion", "stats", "forecast", "audit"] as const;

export const CLI_USAGE = `  login       log in (--server URL --username NAME --password-stdin, or --api-key-stdin)
  logout      forget the stored login          whoami     who the credential is
  apply       create/update jobs and DAGs from files (-f PATH, --dry-run, --prune)
  get         list jobs, dags, runs (--job), nodes (-o table|json|yaml)
  describe    a job or a run in detail
  pause, resume, trigger [--follow], delete    a job
  cancel, retry                                a run
  logs        a run's log (-f follows it)
  run         run the job in a file now (-f FILE --follow exits with the run's code)
  dag         trigger [--follow], graph, describe, pause, resume, delete a DAG
  schedule    preview a schedule's fires offline, DST changes marked
  why         why a run has not started or a job has not fired
  schema json the JSON Schema of job files, for editors
  completion  bash or zsh completion script
  stats       the cluster's figures over a window (--window PT1H): runs, lateness, queues, nodes, schedulers
  forecast    runs due per pool over the next hours (--within PT24H, --pool), hotspots and how to spread them
  audit       the audit trail of mutations (--action, --target, --since); --verify its hash chain
  --server URL and --profile NAME go before or after the command: kairos --profile prod get jobs
  Run \`kairos <command> --help\` for a command's options and an example.`;

export function buildProgram(ctx: Ctx, current: { opts: GlobalOptions; command?: Command }): Command {
  const program = new Command("kairos")
    .description("Kairos: jobs as files, runs you can follow. Server roles: kairos dev|api|scheduler|executor (see kairos --help).")
    .version("0.1.0", "--version")
    .showHelpAfterError("(add --help for usage)")
    .addHelpText("after", `\n${EXIT_CODES_HELP}\n\nEnvironment: KAIROS_SERVER, KAIROS_TOKEN or KAIROS_API_KEY (instead of a stored login), KAIROS_PROFILE, KAIROS_TIMEOUT (how long a request waits for an answer, default PT1M), NO_COLOR, XDG_CONFIG_HOME.\n`);
  program.exitOverride();
  program.configureOutput({ writeOut: (s) => ctx.io.out(s), writeErr: (s) => ctx.io.err(s) });
  // --server and --profile are the program's, so they may come before the command as well as
  // after it (`kairos --profile prod get jobs`, `kairos dag --profile prod describe etl`): the
  // program takes them wherever they are, and the command reads them with optsWithGlobals.
  program
    .option("--server <url>", "the Kairos server (default: KAIROS_SERVER, else the profile's); before or after the command")
    .option("--profile <name>", "the stored login to use (default: KAIROS_PROFILE, else the last one logged in to); before or after the command");
  program.hook("preAction", (_root, action) => {
    current.opts = action.optsWithGlobals() as GlobalOptions;
    current.command = action;
  });
  registerAuth(program, ctx);
  registerJobs(program, ctx);
  registerFollow(program, ctx);
  registerDag(program, ctx);
  registerTools(program, ctx);
  registerStats(program, ctx);
  registerAudit(program, ctx);
  const applyToAll = (cmd: Command) => {
    cmd.exitOverride();
    cmd.configureOutput({ writeOut: (s) => ctx.io.out(s), writeErr: (s) => ctx.io.err(s) });
    cmd.showHelpAfterError("(add --help for usage)");
    cmd.commands.forEach(applyToAll);
  };
  program.commands.forEach(applyToAll);
  return program;
}

/** Runs one command line (without the node and script arguments) and returns the exit code. */
export async function runCli(argv: string[], io: Io = processIo()): Promise<number> {
  const current: { opts: GlobalOptions; command?: Command } = { opts: {} };
  const ctx = new Ctx(io, () => current.opts);
  const program = buildProgram(ctx, current);
  const stop = () => {
    ctx.close();
    io.err("\n[kairos] interrupted\n");
    process.exit(EXIT.CANCELLED);
  };
  process.once("SIGINT", stop);
  try {
    await program.parseAsync(argv, { from: "user" });
    return ctx.exitCode;
  } catch (thrown) {
    // A refused API field is named by the flag that filled it (`--within`, not `within`).
    const e = flagTerms(thrown, current.command);
    if (e instanceof CommanderError) {
      if (e.code === "commander.helpDisplayed" || e.code === "commander.version" || e.code === "commander.help") return EXIT.OK;
      return EXIT.USAGE;
    }
    if (e instanceof CliError) {
      io.err(`kairos: ${e.message}\n`);
      return e.exitCode;
    }
    io.err(`kairos: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return EXIT.FAILED;
  } finally {
    process.removeListener("SIGINT", stop);
    ctx.close();
  }
}
