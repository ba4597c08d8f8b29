/**
 * Stand-in for src/executor/sandbox/sandbox.ts in the benchmarks' "no-op" executor (see
 * noop-process-hooks.mjs): with no process per run there is nothing to sandbox, so no cgroup and
 * no bubblewrap. Each attempt still gets an empty working directory of its own (a temp dir,
 * removed when the slot is released), because a DAG task's inputs and result files live there.
 * The sandbox's own cost per run is measured by bench/sandbox.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export class Sandbox {
  constructor() {
    this.mode = "none";
    this.isolation = { mode: "NONE", enforced: [], network: ["NONE"], notes: ["bench: no-op executor, no process and no sandbox"] };
    this.root = mkdtempSync(join(tmpdir(), "kairos-noop-sandbox-"));
    /** slot → its attempt's working directory */
    this.dirs = new Map();
  }
  static open() {
    return new Sandbox();
  }
  prepare(slot) {
    const cwd = mkdtempSync(join(this.root, `slot${slot}-`));
    this.dirs.set(slot, cwd);
    return { process: { file: "true", args: [], env: {}, cwd, stop: "group" }, diskDir: cwd, diskBytes: 0, cgroup: null };
  }
  releaseSlot(slot) {
    const dir = this.dirs.get(slot);
    this.dirs.delete(slot);
    if (dir) rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  async close() {
    rmSync(this.root, { recursive: true, force: true });
  }
}
