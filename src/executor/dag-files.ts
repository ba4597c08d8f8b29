/**
 * Data along a DAG's edges, on the executor's side (docs/dags.md): before a DAG task's program
 * starts, its inputs and params are written into its slot's given directory (KAIROS_INPUTS,
 * KAIROS_PARAMS; read-only to the program, see sandbox/given-files.ts), and KAIROS_RESULT names
 * where in its working directory it may write its result; after it exits 0, that file is read
 * (never following a link the program made, at most 64 KiB, valid JSON) and goes with the
 * outcome. A result over the cap or not JSON fails the attempt with a clear error.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { AttemptOutcome } from "../core/index.js";
import { checkResult, MAX_RESULT_BYTES, type DagTaskIo } from "../dag/index.js";
import type { RunDoc } from "../domain/index.js";

const RESULT_FILE = ".kairos-result.json";
const INPUTS_FILE = "inputs.json";
const PARAMS_FILE = "params.json";

export type DagResult = { json: string | null } | { error: string };

/** Where a result is read (one byte past the cap, to see it is over): one for the process, as readDagResult is synchronous. */
const RESULT_BUFFER = Buffer.allocUnsafe(MAX_RESULT_BYTES + 1);

/** The files of a DAG task run, read before the program starts. */
export interface DagFiles {
  inputsJson: string;
  paramsJson: string;
}

export async function readDagFiles(io: DagTaskIo | undefined, run: RunDoc): Promise<DagFiles | null> {
  if (!run.dagRunId || !io) return null;
  return io.filesFor(run);
}

/**
 * The KAIROS_* variables of a DAG task, for a program whose working directory is `home` and whose
 * given directory is `given` (both as it sees them).
 */
export function dagEnv(home: string, given: string, run: Pick<RunDoc, "dagRunId" | "taskKey" | "mapIndex" | "fireKey">): Record<string, string> {
  return {
    KAIROS_INPUTS: join(given, INPUTS_FILE),
    KAIROS_PARAMS: join(given, PARAMS_FILE),
    KAIROS_RESULT: join(home, RESULT_FILE),
    KAIROS_DAG_RUN_ID: run.dagRunId ?? "",
    KAIROS_TASK_KEY: run.taskKey ?? "",
    KAIROS_MAP_INDEX: run.mapIndex == null ? "" : String(run.mapIndex),
    // The task's attempt in its DAG run (retryDagRun bumps it): the fire key's `#<attempt>`.
    KAIROS_TASK_ATTEMPT: run.fireKey.slice(run.fireKey.lastIndexOf("#") + 1),
  };
}

/** The inputs and params as the files of the slot's given directory (Sandbox.prepare writes them there). */
export function givenDagFiles(files: DagFiles): Record<string, string> {
  return { [INPUTS_FILE]: files.inputsJson, [PARAMS_FILE]: files.paramsJson };
}

/** Reads the result the program left in `workDir` (not following links; at most one byte past the cap is read), and removes the file. */
export function readDagResult(workDir: string): DagResult {
  const path = join(workDir, RESULT_FILE);
  // Most tasks write no result: asked without an exception (open's ENOENT, an Error made with its
  // stack, cost more than all the rest). A link is still found below: open does not follow it.
  if (!lstatSync(path, { throwIfNoEntry: false })) return { json: null };
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { json: null };
    if (code === "ELOOP") return { error: "RESULT_NOT_A_FILE: KAIROS_RESULT is a symbolic link; write the result to the file itself" };
    return { error: `RESULT_UNREADABLE: KAIROS_RESULT could not be read (${code ?? String(e)})` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { error: "RESULT_NOT_A_FILE: KAIROS_RESULT must be a regular file" };
    if (st.size > MAX_RESULT_BYTES) return checkResult("", st.size);
    const buf = RESULT_BUFFER;
    let n = 0;
    for (;;) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
      if (n >= buf.length) break;
    }
    return checkResult(buf.subarray(0, n).toString("utf8"), n);
  } finally {
    closeSync(fd);
    // Read: gone, so a task that wrote nothing else leaves its work directory empty, and the
    // slot's directories are kept rather than made again (sandbox.ts releaseSlot).
    try {
      unlinkSync(path);
    } catch {
      // gone already, or not ours to remove: the slot is made again
    }
  }
}

/** The outcome with the DAG task's result: stored when it succeeded, or the attempt FAILED when its result was refused. */
export function withDagResult(outcome: AttemptOutcome, result: DagResult | undefined): AttemptOutcome {
  if (!result || outcome.kind !== "SUCCEEDED") return outcome;
  if ("error" in result) return { ...outcome, kind: "FAILED", error: result.error };
  return result.json === null ? outcome : { ...outcome, resultJson: result.json };
}
