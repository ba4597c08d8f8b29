/**
 * The command line's errors and exit codes (docs/cli.md). A CliError carries the code the process
 * exits with; anything else thrown is a bug and exits 1 with its stack.
 */

/** Exit codes of `kairos`. A followed run's own exit code (0–255) is passed through as it is. */
export const EXIT = {
  OK: 0,
  /** Files that do not validate, or an apply that could not do everything it planned. */
  FAILED: 1,
  /** Bad usage (unknown flag, missing argument), or an error answered by the API or the network. */
  USAGE: 2,
  /** A followed run timed out (as `timeout(1)`). */
  TIMED_OUT: 124,
  /** A followed run ended with no exit code (lost, DEAD, or failed before it started). */
  NO_EXIT_CODE: 125,
  /** A followed run was cancelled (as a shell's 128 + SIGINT). */
  CANCELLED: 130,
} as const;

export class CliError extends Error {
  override name = "CliError";
  constructor(
    message: string,
    readonly exitCode: number = EXIT.USAGE,
  ) {
    super(message);
  }
}

/** The text of the exit codes, for `--help` and docs/cli.md. */
export const EXIT_CODES_HELP = `Exit codes:
  0     success (for a followed run: the run succeeded)
  1-255 a followed run's own exit code, passed through
  1     invalid files (kairos apply), or an apply that failed part-way
  2     usage error, or an error from the API or the network (not found, not logged in, ...)
  124   a followed run timed out
  125   a followed run ended without an exit code (lost or DEAD, or it never started)
  130   a followed run was cancelled
  128+N a followed run was killed by signal N
  141   stdout was closed before the output ended (a reader such as head stopped)`;

