/**
 * The `kairos` command line for people who own jobs (docs/cli.md): `login`, `apply -f`, `get`,
 * `describe`, `trigger --follow`, `logs -f`, ... on the typed client generated from
 * client/cli.graphql. `runCli` returns the exit code; src/main.ts dispatches here.
 */
export { buildProgram, CLI_COMMANDS, CLI_USAGE, runCli } from "./program.js";
