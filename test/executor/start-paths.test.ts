/**
 * The two ways a sandboxed run starts behave alike (issue #27): through the launcher, in the
 * slot's long-lived sandbox (the default), and with a bubblewrap of its own (EGRESS runs, nodes
 * without a C compiler, KAIROS_SANDBOX_LAUNCHER=off). Same exit codes and signals, same view
 * (/work as cwd and HOME, uid 1000, the given files at /kairos, only the declared environment),
 * same stop on a timeout, and a program that does not exist ends 127 either way.
 */
import { chownSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_RESOURCES } from "../../src/core/resources.js";
import type { JobSpec } from "../../src/domain/documents.js";
import { RunAbort } from "../../src/executor/abort.js";
import { BINARY_FILE } from "../../src/executor/kinds/programs.js";
import { toOutcome, type ProcessResult } from "../../src/executor/outcome.js";
import { runProcess } from "../../src/executor/process.js";
import { launcherBinary } from "../../src/executor/sandbox/launcher.js";
import { Sandbox } from "../../src/executor/sandbox/sandbox.js";
import { silentLogger } from "../../src/support/log.js";

/** The run's error, as the user reads it in `run { error }`. */
function errorOf(r: ProcessResult): string | null {
  return toOutcome(r, { cancelled: false, oomKilled: false, diskFull: false, resources: DEFAULT_RESOURCES }, Date.now(), null).error;
}

const canSandbox = process.platform === "linux" && process.getuid?.() === 0 && launcherBinary() !== null;

describe.runIf(canSandbox).each([
  { path: "launcher (sandbox kept per slot)", launcher: true },
  { path: "a bubblewrap per run", launcher: false },
])("a sandboxed run started by $path", ({ launcher }) => {
  const root = mkdtempSync(join(tmpdir(), "kairos-start-paths-"));
  let sandbox: Sandbox;
  let n = 0;

  beforeAll(async () => {
    sandbox = Sandbox.open({ mode: "bubblewrap", launcher, workRoot: join(root, "work"), slots: 1, uidBase: 63_300 + (launcher ? 0 : 10), roPaths: [], nodeTag: `paths${launcher ? "l" : "b"}`, log: silentLogger() });
    await sandbox.ready();
  });

  afterAll(async () => {
    await sandbox?.close();
    rmSync(root, { recursive: true, force: true });
  });

  async function run(spec: Partial<JobSpec>, opts: { timeoutMs?: number; given?: Record<string, string>; program?: Buffer; abort?: RunAbort } = {}) {
    const full: JobSpec = { kind: "COMMAND", command: null, argv: null, env: {}, timeoutMs: 30_000, pool: "default", resources: DEFAULT_RESOURCES, ...spec };
    const p = sandbox.prepare(0, `paths-${process.pid}-${n++}`, full, { KAIROS_RUN_ID: "r1" }, DEFAULT_RESOURCES, opts.given ?? {});
    expect(Boolean(p.process.launch)).toBe(launcher);
    if (opts.program) {
      // Where installProgram puts a BINARY job's file: the run's /work, owned by the slot's user.
      const file = join(p.process.cwd, BINARY_FILE);
      writeFileSync(file, opts.program, { mode: 0o755 });
      chownSync(file, statSync(p.process.cwd).uid, statSync(p.process.cwd).gid);
    }
    try {
      return await runProcess({ ...p.process, timeoutMs: opts.timeoutMs ?? 30_000, killGraceMs: 500 }, opts.abort ?? new RunAbort());
    } finally {
      p.cgroup?.killAll();
      p.cgroup?.remove();
      await sandbox.releaseSlot(0);
    }
  }

  it("reports the program's exit code and its output", async () => {
    expect((await run({ argv: ["true"] })).exitCode).toBe(0);
    const r = await run({ command: "echo out; echo err >&2; exit 3" });
    expect(r.exitCode).toBe(3);
    expect(r.outputTail).toContain("out");
    expect(r.outputTail).toContain("err");
  });

  it("runs as the sandbox user in /work, with only its own environment and the given files", async () => {
    const r = await run({ command: 'id -u; pwd; echo "$HOME"; env | sort | cut -d= -f1 | tr "\\n" " "; echo; cat /kairos/params.json', env: { MINE: "1" } }, { given: { "params.json": '{"a":1}' } });
    const [uid, pwd, home, names, params] = r.outputTail!.trim().split("\n");
    expect({ uid, pwd, home }).toEqual({ uid: "1000", pwd: "/work", home: "/work" });
    const set = new Set(names!.trim().split(" "));
    for (const k of ["HOME", "KAIROS_RUN_ID", "LANG", "MINE", "PATH", "TMPDIR"]) expect(set.has(k), k).toBe(true);
    // Nothing else but what the shell itself sets.
    expect([...set].filter((k) => !["HOME", "KAIROS_RUN_ID", "LANG", "MINE", "PATH", "TMPDIR", "PWD", "SHLVL", "_", "OLDPWD"].includes(k))).toEqual([]);
    expect(params).toBe('{"a":1}');
  });

  it("stops a program at its timeout (SIGTERM to the program, then the whole run)", async () => {
    const t0 = Date.now();
    const r = await run({ command: "trap '' TERM; sleep 30" }, { timeoutMs: 300 });
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(r.signal).toBe("SIGKILL");
    expect(Date.now() - t0).toBeLessThan(10_000);
    const polite = await run({ argv: ["sleep", "30"] }, { timeoutMs: 300 });
    expect(polite.timedOut).toBe(true);
    // The signal it died of, not the 143 a bubblewrap reports for it.
    expect({ exitCode: polite.exitCode, signal: polite.signal }).toEqual({ exitCode: null, signal: "SIGTERM" });
    const shell = await run({ command: "sleep 30; echo never" }, { timeoutMs: 300 });
    expect({ exitCode: shell.exitCode, signal: shell.signal }).toEqual({ exitCode: null, signal: "SIGTERM" });
  });

  it("reports the stop signal of a cancel, also when the program caught it and exited itself", async () => {
    const abort = new RunAbort();
    setTimeout(() => abort.abort(new Error("cancelled")), 300);
    const cancelled = await run({ argv: ["sleep", "30"] }, { abort });
    expect({ aborted: cancelled.aborted, exitCode: cancelled.exitCode, signal: cancelled.signal }).toEqual({ aborted: true, exitCode: null, signal: "SIGTERM" });
    const tidy = await run({ argv: ["bash", "-c", "trap 'echo cleaning up; exit 3' TERM; sleep 30 & wait"] }, { timeoutMs: 300 });
    expect({ exitCode: tidy.exitCode, signal: tidy.signal, out: tidy.outputTail }).toEqual({ exitCode: 3, signal: "SIGTERM", out: "cleaning up\n" });
  });

  it("ends a program that does not exist with 127, and the run's error names it (argv and command alike)", async () => {
    const r = await run({ argv: ["definitely-not-a-program"] });
    expect(r.exitCode).toBe(127);
    expect(r.outputTail).toContain("definitely-not-a-program");
    expect(errorOf(r)).toBe(`exit code 127: program not found: "definitely-not-a-program" (not in the job's PATH)`);
    expect(errorOf(await run({ command: "definitely-not-a-cmd" }))).toBe(`exit code 127: program not found: "definitely-not-a-cmd" (not in the job's PATH)`);
    expect(errorOf(await run({ argv: ["/work/nothing-here"] }))).toBe(`exit code 127: program not found: "/work/nothing-here" (no such file)`);
  });

  it("ends a program that cannot be run with 126, naming it and why", async () => {
    expect(errorOf(await run({ argv: ["/etc/passwd"] }))).toBe(`exit code 126: cannot run "/etc/passwd": Permission denied`);
    // An uploaded binary built for another system, run as a BINARY job runs it (executor/kinds/programs.ts).
    const bad = await run({ argv: [`./${BINARY_FILE}`] }, { program: Buffer.from("\x7fELF-not-for-this-cpu-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "latin1") });
    expect(errorOf(bad)).toMatch(/^exit code 126: cannot run the job's binary: Exec format error \(not a program for this node's system/);
  });
});
