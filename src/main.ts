/**
 * `kairos <role> [options]`: one program, several roles (docs/design.md, "Roles").
 */
// The roles' code (the server, its stores and packages) is imported when a role starts, so that
// the command line's commands, which need none of it, start in a fraction of the time.
import type { Role } from "./config/index.js";
import { ConfigError } from "./domain/index.js";

// The AWS SDK warns at every start on Node 20 that its releases after January 2027 will need Node 22.
// Its version here is pinned by package-lock.json, so the warning says nothing about this install:
// it stays off unless the environment sets it (the SDK reads it when its first client is made).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

/** What src/cli/index.ts exports (typed here: a type import would pull src/cli into this build). */
interface CliModule {
  CLI_COMMANDS: readonly string[];
  CLI_USAGE: string;
  runCli(argv: string[]): Promise<number>;
}

/**
 * The command line for people who own jobs, src/cli/: compiled on its own to dist/cli/ (it imports
 * the generated client, outside src/), loaded only when a CLI command is asked for.
 */
async function loadCli(): Promise<CliModule> {
  const entry = import.meta.url.endsWith(".ts") ? "./cli/index.ts" : "./cli/src/cli/index.js";
  return (await import(new URL(entry, import.meta.url).href)) as CliModule;
}

/** Kept in step by hand with CLI_COMMANDS in src/cli/program.ts (test/cli/commands-dispatched.test.ts checks every one). */
const CLI_COMMANDS = ["login", "logout", "whoami", "apply", "get", "describe", "pause", "resume", "trigger", "delete", "cancel", "retry", "logs", "run", "dag", "schedule", "why", "schema", "completion", "stats", "forecast", "audit"];

const USAGE = `Usage: kairos <command> [options]

Commands for people who own jobs (\`kairos <command> --help\` for each):
CLI_USAGE

Server roles:
  dev         API, scheduler and executor in one process on embedded defaults
              (MongoDB emulator and in-memory queues unless MONGO_URL / REDIS_URL are set;
              production images have no emulator: set MONGO_URL there)
  api         GraphQL API (HTTP and WebSocket on /graphql)    needs MONGO_URL, REDIS_URL, KAIROS_JWT_SECRET
  scheduler   time-wheel shards, retries, reaper              needs MONGO_URL, REDIS_URL
  executor    pulls and runs jobs on this node                needs MONGO_URL, REDIS_URL
  emulator    the MongoDB wire-protocol emulator (--port 27017 --data-dir DIR); not in production images
  emit-schema write schema.graphql from the code

Options (override the environment):
  --port N  --host H  --data-dir DIR  --mongo-url URL  --redis-url URL
  --log-level LEVEL  --log-format json|pretty|auto  --metrics-port N
  --slots N  --pools a,b  --node-name NAME  --shards N

See docs/configuration.md for every setting.`;

/** `kairos <role> --help`: the role's line of USAGE and the options every role takes. */
function roleUsage(role: string): string {
  const lines = USAGE.split("\n");
  const at = lines.findIndex((l) => l.startsWith(`  ${role} `));
  const about: string[] = [];
  for (let i = at; i >= 0 && i < lines.length && (i === at || lines[i]!.startsWith("      ")); i++) about.push(lines[i]!);
  const options = lines.slice(lines.indexOf("Options (override the environment):"));
  return [`Usage: kairos ${role} [options]`, "", ...about, "", ...options].join("\n");
}

/** The command line's options that may come before its command: `kairos --profile prod get jobs`. */
const LEADING_CLI_OPTIONS = ["--server", "--profile"];

/** Where the command is: after any --server URL / --profile NAME (or --profile=NAME) before it. */
function commandIndex(argv: string[]): number {
  let i = 0;
  for (;;) {
    const a = argv[i];
    if (a !== undefined && LEADING_CLI_OPTIONS.includes(a)) i += 2;
    else if (a !== undefined && LEADING_CLI_OPTIONS.some((f) => a.startsWith(`${f}=`))) i += 1;
    else return i;
  }
}

/**
 * What is wrong with a command line that starts with an option the dispatcher cannot take there:
 * --server/--profile before something that is not a command of the command line, or another
 * option (`kairos --port 4000 dev`) before the command. Says where it goes.
 */
function misplacedOption(argv: string[], at: number, roles: readonly string[]): string {
  const known = [...roles, "emulator", "emit-schema", ...CLI_COMMANDS];
  if (at === 0) {
    // `kairos --port 4000 dev`: the same line with the command first, when there is one.
    const first = argv.findIndex((a) => known.includes(a));
    const fixed = first > 0 ? `kairos ${[...argv.slice(first), ...argv.slice(0, first)].join(" ")}` : "e.g. kairos dev --port 4000 or kairos get jobs -o json";
    return `"${argv[0]}" is an option, not a command: options go after the command (${fixed}); kairos --help lists the commands`;
  }
  const lead = argv.slice(0, at);
  const flags = [...new Set(lead.filter((a) => a.startsWith("--")).map((a) => a.split("=")[0]))].join(" and ");
  const command = argv[at];
  const valueIsCommand = lead.some((a, i) => i > 0 && LEADING_CLI_OPTIONS.includes(lead[i - 1]!) && CLI_COMMANDS.includes(a));
  if (command === undefined || valueIsCommand) return `${flags} needs a value and then a command, e.g. kairos --profile NAME get jobs (or kairos get jobs --profile NAME)`;
  if (!known.includes(command)) return `unknown command "${command}" after ${flags}; use one of: ${CLI_COMMANDS.join(", ")}`;
  return `${flags} belongs to the command line's commands (${CLI_COMMANDS.join(", ")}), not to the role "${command}": kairos ${command} --help lists its options`;
}

async function main(argv: string[]): Promise<void> {
  const at = commandIndex(argv);
  const head = argv[at];
  if (at > 0 && head !== undefined && CLI_COMMANDS.includes(head)) {
    const cli = await loadCli();
    process.exitCode = await cli.runCli(argv);
    return;
  }
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help" || (at > 0 && (head === "--help" || head === "-h"))) {
    const cli = await loadCli();
    process.stdout.write(`${USAGE.replace("CLI_USAGE", cli.CLI_USAGE)}\n`);
    return;
  }
  if (CLI_COMMANDS.includes(command) || command === "--version") {
    const cli = await loadCli();
    process.exitCode = await cli.runCli(argv);
    return;
  }
  const { ROLES, loadRoleConfig } = await import("./config/index.js");
  if (at > 0 || command.startsWith("-")) throw new ConfigError(misplacedOption(argv, at, ROLES));
  if (!(ROLES as readonly string[]).includes(command) && command !== "emulator" && command !== "emit-schema") {
    throw new ConfigError(`unknown command "${command}"; use one of: ${[...ROLES, "emulator", "emit-schema", ...CLI_COMMANDS].join(", ")}`);
  }
  // `kairos dev --help` is what a newcomer types first: answer it (it was "unknown option --help").
  if ((ROLES as readonly string[]).includes(command) && rest.some((a) => a === "--help" || a === "-h")) {
    process.stdout.write(`${roleUsage(command)}\n`);
    return;
  }
  // A role's settings are checked before its code loads: a bad one is refused at once.
  const config = command === "emulator" || command === "emit-schema" ? null : loadRoleConfig(command as Role, rest, process.env);
  await import("reflect-metadata");
  const { startKairos, loadEmulatorCli, runEmulatorCli, devBanner, keepAdminPassword } = await import("./app/index.js");
  const { createLogger, logFormat } = await import("./support/index.js");
  if (command === "emulator") {
    await runEmulatorCli(await loadEmulatorCli(), rest);
    return;
  }
  if (command === "emit-schema") {
    const { buildKairosSchema } = await import("./resolvers/index.js");
    const path = rest[0] ?? "schema.graphql";
    await buildKairosSchema({ emitSchemaFile: path });
    process.stdout.write(`wrote ${path}\n`);
    return;
  }
  const role = command as Role;
  if (!config) throw new Error("unreachable: no settings for a role");
  // Lines for people when `kairos dev` writes to a terminal, JSON otherwise (KAIROS_LOG_FORMAT decides when set).
  const log = createLogger(config.logLevel, { role }, logFormat(config.logFormat, role, process.stdout.isTTY === true));
  // The handlers come before the banner: whoever reads it may signal at once, and a SIGTERM that
  // came between the two ended the process without its shutdown (no exit code). While the role
  // starts there is nothing to drain yet: a signal then exits at once, as it did without a handler.
  let app: Awaited<ReturnType<typeof startKairos>> | null = null;
  let stopping = false;
  const shutdown = (signal: string) => {
    if (!app) {
      log.warn({ signal }, "signal while starting: exiting now");
      process.exit(1);
    }
    if (stopping) {
      log.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, "shutting down");
    app.stop().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error({ err: e }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  app = await startKairos(config, { log });

  if (role === "dev" && app.api) {
    const password = keepAdminPassword(config, app.generatedAdminPassword);
    const info = { url: app.api.url, adminUser: config.adminUser, dataDir: config.dataDir, embeddedMongo: !config.mongoUrl, inMemoryQueues: !config.redis, password };
    process.stderr.write(devBanner(info, process.stderr.isTTY === true && !process.env.NO_COLOR));
  }
}

main(process.argv.slice(2)).catch((e: unknown) => {
  if (e instanceof ConfigError || (e instanceof Error && e.name === "CliError")) {
    process.stderr.write(`kairos: ${e.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`kairos: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
