/**
 * SCRIPT and BINARY attempts: the file put in the run's working directory (an inline script
 * written out, an artifact fetched through the node's verified cache and copied), and the argv
 * that runs it in the same sandbox as a command: `<interpreter> <file> args...` for a script,
 * `./<file> args...` for a binary.
 */
import { chmodSync, chownSync, constants, copyFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SpecArtifact, JobSpec, NodeInterpreter } from "../../domain/index.js";

/** Where the run's program is, relative to its working directory (HOME, /work inside the sandbox). */
export const SCRIPT_FILE = ".kairos-script";
export const BINARY_FILE = ".kairos-program";

/** Fetches an artifact into the node's cache, verified by its sha256; resolves to the local file. */
export interface ArtifactSource {
  fetch(ref: Pick<SpecArtifact, "id" | "sha256" | "size" | "blobKey">): Promise<string>;
}

/**
 * The environment an interpreter's scripts get unless the job's `env` says otherwise. Python
 * buffers stdout in blocks when it is not a terminal: its prints would reach the log late, and
 * after its stderr (a traceback before the lines printed before it). Unbuffered, both streams
 * come in the order they were written, as from a shell.
 */
const INTERPRETER_ENV: Readonly<Record<string, Record<string, string>>> = { python3: { PYTHONUNBUFFERED: "1" } };

/** What a SCRIPT or BINARY run executes, as a COMMAND-shaped spec for the sandbox. */
export function programSpec(spec: JobSpec, interpreters: ReadonlyMap<string, NodeInterpreter>): JobSpec {
  if (spec.kind === "SCRIPT") {
    const name = spec.script!.interpreter;
    const interp = interpreters.get(name);
    // The queues keep such runs away; one taken anyway (a queue named by hand) fails clearly.
    if (!interp) throw new Error(`this node has no ${name} interpreter (it has: ${[...interpreters.keys()].join(", ") || "none"})`);
    return { ...spec, kind: "COMMAND", command: null, env: { ...INTERPRETER_ENV[name], ...spec.env }, argv: [interp.path, `./${SCRIPT_FILE}`, ...(spec.script!.args ?? [])] };
  }
  return { ...spec, kind: "COMMAND", command: null, argv: [`./${BINARY_FILE}`, ...(spec.binary!.args ?? [])] };
}

/**
 * Puts the run's program into `workDir` (its owner: the slot's user where runs get one).
 * Scripts are 0644 (read by their interpreter), binaries 0755.
 */
export async function installProgram(spec: JobSpec, workDir: string, artifacts: ArtifactSource | null): Promise<void> {
  const uid = statSync(workDir).uid;
  const artifact = spec.kind === "SCRIPT" ? spec.script!.artifact : spec.binary!.artifact;
  const file = join(workDir, spec.kind === "SCRIPT" ? SCRIPT_FILE : BINARY_FILE);
  const mode = spec.kind === "SCRIPT" ? 0o644 : 0o755;
  if (spec.kind === "SCRIPT" && spec.script!.source !== null) {
    writeFileSync(file, spec.script!.source, { mode, flag: "wx" });
  } else {
    if (!artifact) throw new Error("the spec names no artifact");
    if (!artifacts) throw new Error("this node has no artifact store configured (S3 settings), so it cannot run uploaded artifacts");
    const cached = await artifacts.fetch({ id: artifact.id, sha256: artifact.sha256, size: artifact.size, blobKey: artifact.blobKey });
    // Made, never overwritten (like the script's "wx"): a leftover of a slot whose reset failed,
    // a symlink above all, is not followed by the executor (root on a real node).
    copyFileSync(cached, file, constants.COPYFILE_EXCL);
  }
  chmodSync(file, mode);
  if (process.getuid?.() === 0 && uid !== 0) chownSync(file, uid, uid);
}
