/**
 * Why a program could not be started, read from the last lines of its output: a run that ends
 * 127 or 126 names the program it could not find or run, whichever way it was started. The
 * launcher (sandbox/launcher.c) and the shells each say it in their own words:
 *
 *   kairos: program not found: "prog" (not in the job's PATH)    the launcher, argv
 *   kairos: cannot run "prog": Permission denied                 the launcher, argv
 *   /bin/sh: 1: prog: not found                                  dash, a command
 *   kairos: 1: exec: prog: not found                             dash's exec (a bubblewrap per run, argv)
 *   bash: line 1: prog: command not found                        bash
 *   /bin/sh: 1: ./prog: Permission denied                        dash, 126
 */
import { BINARY_FILE, SCRIPT_FILE } from "./kinds/programs.js";

/** What the shell or the launcher said about the program it could not start. */
export interface StartFailure {
  program: string;
  /** Why it could not run (126 only): "Permission denied", "Exec format error" … */
  reason: string | null;
}

/** Only the end of the output is read: the failure is the last thing the run printed. */
const READ_BYTES = 2_048;

const NOT_FOUND = [
  /^kairos: program not found: "(.+)"/,
  /^[^:\n]*: (?:line )?\d+: (?:exec: )?(.+?): not found$/,
  /^[^:\n]*: (?:line \d+: )?(?:exec: )?(.+?): (?:command not found|No such file or directory)$/,
];

const CANNOT_RUN = [
  /^kairos: cannot run "(.+)": (.+)$/,
  /^[^:\n]*: (?:line )?\d+: (?:exec: )?(.+?): (Permission denied|Exec format error|Is a directory|.*cannot execute.*)$/,
  /^[^:\n]*: (?:line \d+: )?(?:exec: )?(.+?): (Permission denied|Exec format error|Is a directory|cannot execute.*)$/,
];

/** The program a run ending `exitCode` (127: not found, 126: not runnable) could not start, if its output says. */
export function startFailure(exitCode: number | null, outputTail: string): StartFailure | null {
  if (exitCode !== 127 && exitCode !== 126) return null;
  const lines = outputTail.slice(-READ_BYTES).trimEnd().split("\n").reverse();
  const patterns = exitCode === 127 ? NOT_FOUND : CANNOT_RUN;
  for (const line of lines) {
    for (const p of patterns) {
      const m = p.exec(line.trimEnd());
      if (m) return { program: m[1]!, reason: exitCode === 126 ? (m[2] ?? null) : null };
    }
  }
  return null;
}

/** The program as the user knows it: a SCRIPT's or BINARY's file by what it is, not by its name in /work. */
function shown(program: string): string {
  if (program === `./${BINARY_FILE}` || program === BINARY_FILE) return "the job's binary";
  if (program === `./${SCRIPT_FILE}` || program === SCRIPT_FILE) return "the job's script";
  return `"${program}"`;
}

/** The run's error for an exit of 127 or 126: the program named when the output says which it was. */
export function startFailureError(exitCode: 127 | 126, outputTail: string): string {
  const f = startFailure(exitCode, outputTail);
  if (exitCode === 127) {
    if (!f) return "exit code 127: program or command not found";
    return `exit code 127: program not found: ${shown(f.program)} (${f.program.includes("/") ? "no such file" : "not in the job's PATH"})`;
  }
  if (!f) return "exit code 126: program is not executable";
  const why = f.reason === "Exec format error" ? "Exec format error (not a program for this node's system: built for another CPU or OS, or a script without a #! line)" : f.reason;
  return `exit code 126: cannot run ${shown(f.program)}: ${why ?? "not executable"}`;
}
