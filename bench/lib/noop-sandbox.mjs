/**
 * Stand-in for src/executor/sandbox/sandbox.ts in the benchmarks' "no-op" executor (see
 * noop-process-hooks.mjs): with no process per run there is nothing to sandbox, so no cgroup and
 * no bubblewrap. Each slot still has a working directory of its own (a temp dir, made on the
 * slot's first use and emptied when the slot is released), because a DAG task's inputs and result
 * files live there; for other runs it stays empty and costs one readdir per attempt. The
 * sandbox's own cost per run is measured by bench/sandbox.ts.
 */
import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export class Sandbox {
  constructor() {
    this.mode = "none";
    this.isolation = { mode: "NONE", enforced: [], network: ["NONE"], notes: ["bench: no-op executor, no process and no sandbox"] };
    this.root = mkdtempSync(join(tmpdir(), "kairos-noop-sandbox-"));
    /** Slots whose directory exists. */
    this.made = new Set();
  }
  static open() {
    return new Sandbox();
  }
  /** The real sandbox proves its launcher here; a no-op has none. */
  async ready() {}
  dir(slot) {
    return join(this.root, `slot${slot}`);
  }
  given(slot) {
    return join(this.root, `slot${slot}-given`);
  }
  /** As the real sandbox: the run's given files written in place, any other there blanked in place (given-files.ts giveFiles). */
  prepare(slot, _name, spec, _env, _res, files = {}) {
    const cwd = this.dir(slot);
    const given = this.given(slot);
    if (!this.made.has(slot)) {
      mkdirSync(cwd, { recursive: true });
      mkdirSync(given, { recursive: true });
      this.made.add(slot);
    }
    lstatSync(given);
    const present = readdirSync(given);
    for (const name of present) {
      const fd = openSync(join(given, name), constants.O_WRONLY | constants.O_NOFOLLOW);
      // One space for a file this run is not given, as the real sandbox (truncating to nothing makes ext4 wait for its journal).
      const text = Object.hasOwn(files, name) ? files[name] || " " : " ";
      const size = fstatSync(fd).size;
      const length = writeSync(fd, text, 0, "utf8");
      if (size > length) ftruncateSync(fd, length);
      closeSync(fd);
    }
    for (const name of Object.keys(files)) {
      if (present.includes(name)) continue;
      const fd = openSync(join(given, name), constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_CREAT, 0o644);
      fstatSync(fd);
      writeSync(fd, files[name] || " ", 0, "utf8");
      closeSync(fd);
    }
    // The job's own variables pass through (noop-process.mjs honours BENCH_RESULT).
    return { process: { file: "true", args: [], env: { ...(spec?.env ?? {}) }, cwd, stop: "group" }, given: { host: given, inside: given }, diskDir: cwd, diskBytes: 0, cgroup: null };
  }
  /** As the real sandbox: the work directory emptied (the given files are the next run's to rewrite, in prepare). */
  releaseSlot(slot) {
    if (!this.made.has(slot)) return undefined;
    const cwd = this.dir(slot);
    for (const name of readdirSync(cwd)) rmSync(join(cwd, name), { recursive: true, force: true });
    return undefined;
  }
  async close() {
    rmSync(this.root, { recursive: true, force: true });
  }
}
