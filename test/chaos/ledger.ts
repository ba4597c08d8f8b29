/**
 * The external ledger: every attempt of every chaos job appends a `start` line when it begins and
 * an `end` line when its work is done, to a file outside Kairos. A single `echo … >> file` is one
 * O_APPEND write, so concurrent attempts never interleave within a line.
 *
 * Line: `runId attempt fencingToken jobId scheduledFor start|end <epoch ms> <executor node id>`.
 * The last field is `$KAIROS_NODE_ID`, the executor process that runs the job (a sandboxed job
 * cannot see the executor's pid); the harness maps it to that process's pid, which tells the
 * analysis which attempt died with which killed executor. The ledger lives in a directory bound
 * writable into every sandbox (KAIROS_SANDBOX_RW_PATHS); `umask 0` lets every slot's user append.
 */
import { readFileSync } from "node:fs";

export interface LedgerLine {
  runId: string;
  attempt: number;
  token: number;
  jobId: string;
  scheduledFor: number;
  kind: "start" | "end";
  at: number;
  pid: number;
}

/** The shell command of a chaos job: start line, sleep, end line. */
export function ledgerCommand(ledgerPath: string, sleepSeconds: number): string {
  const fields = '"$KAIROS_RUN_ID $KAIROS_ATTEMPT $KAIROS_FENCING_TOKEN $KAIROS_JOB_ID $KAIROS_SCHEDULED_FOR';
  const q = `'${ledgerPath.replace(/'/g, "'\\''")}'`;
  return (
    `umask 0; echo ${fields} start $(date +%s%3N) $KAIROS_NODE_ID" >> ${q}; ` +
    `sleep ${sleepSeconds}; ` +
    `echo ${fields} end $(date +%s%3N) $KAIROS_NODE_ID" >> ${q}`
  );
}

/** `pidOf`: the executor pid of a line's last field (a node id; a bare number is taken as the pid). */
export function parseLedger(text: string, pidOf: (node: string) => number = Number): { lines: LedgerLine[]; malformed: number } {
  const lines: LedgerLine[] = [];
  let malformed = 0;
  for (const raw of text.split("\n")) {
    if (!raw.trim()) continue;
    const f = raw.trim().split(/\s+/);
    const scheduledFor = Date.parse(f[4] ?? "");
    if (f.length !== 8 || (f[5] !== "start" && f[5] !== "end") || !Number.isFinite(scheduledFor)) {
      malformed++;
      continue;
    }
    lines.push({
      runId: f[0]!,
      attempt: Number(f[1]),
      token: Number(f[2]),
      jobId: f[3]!,
      scheduledFor,
      kind: f[5],
      at: Number(f[6]),
      pid: pidOf(f[7]!),
    });
  }
  return { lines, malformed };
}

export function readLedger(path: string, pidOf?: (node: string) => number): { lines: LedgerLine[]; malformed: number } {
  try {
    return parseLedger(readFileSync(path, "utf8"), pidOf);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { lines: [], malformed: 0 };
    throw e;
  }
}
