/**
 * Stand-in for src/executor/sandbox/sandbox.ts in the benchmarks' "no-op" executor (see
 * noop-process-hooks.mjs): with no process per run there is nothing to sandbox, so no cgroup, no
 * slot directories, no bubblewrap. The sandbox's own cost per run is measured by bench/sandbox.ts.
 */
export class Sandbox {
  constructor() {
    this.mode = "none";
    this.isolation = { mode: "NONE", enforced: [], network: ["NONE"], notes: ["bench: no-op executor, no process and no sandbox"] };
  }
  static open() {
    return new Sandbox();
  }
  prepare() {
    return { process: { file: "true", args: [], env: {}, cwd: "/", stop: "group" }, diskDir: "/", diskBytes: 0, cgroup: null };
  }
  releaseSlot() {
    return undefined;
  }
  async close() {}
}
