import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { uptime } from "node:os";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunAbort } from "../../src/executor/abort.js";
import { TailBuffer, commandLine, runProcess, watchdogSleep, type ProcessSpec } from "../../src/executor/process.js";

let cwd: string;
beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), "kairos-proc-"));
});
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

const spec = (over: Partial<ProcessSpec>): ProcessSpec => ({
  command: null,
  argv: null,
  env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
  cwd,
  timeoutMs: 10_000,
  killGraceMs: 500,
  ...over,
});

/** Alive and not a zombie (an orphan killed here may wait for a reaping init as a zombie). */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
};

describe("runProcess", () => {
  it("runs a shell command with only the given environment and records exit code and output", async () => {
    const r = await runProcess(spec({ command: 'echo "out $FOO"; echo err >&2; pwd; echo "home=${HOME:-unset}"; exit 3', env: { PATH: "/usr/bin:/bin", FOO: "bar" } }), new AbortController().signal);
    expect(r.exitCode).toBe(3);
    expect(r.outputTail).toContain("out bar\n");
    expect(r.outputTail).toContain("err\n");
    expect(r.outputTail).toContain(`${cwd}\n`);
    expect(r.outputTail).toContain("home=unset");
    expect(r.timedOut).toBe(false);
  });

  it("executes argv directly without a shell", async () => {
    const r = await runProcess(spec({ argv: ["/bin/echo", "$HOME", "a b"] }), new AbortController().signal);
    expect(r.exitCode).toBe(0);
    expect(r.outputTail).toBe("$HOME a b\n");
  });

  it("kills the whole process group at the timeout, grandchildren included", async () => {
    const pidFile = join(cwd, "grandchild.pid");
    const r = await runProcess(spec({ command: `sleep 30 & echo $! > ${pidFile}; wait`, timeoutMs: 300 }), new AbortController().signal);
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    const { readFile } = await import("node:fs/promises");
    const grandchild = Number((await readFile(pidFile, "utf8")).trim());
    await new Promise((res) => setTimeout(res, 100));
    expect(alive(grandchild)).toBe(false);
  });

  it("escalates to SIGKILL when the program ignores SIGTERM", async () => {
    const r = await runProcess(spec({ command: "trap '' TERM; while :; do sleep 0.05; done", timeoutMs: 200, killGraceMs: 200 }), new AbortController().signal);
    expect(r.timedOut).toBe(true);
    expect(r.signal).toBe("SIGKILL");
  });

  it("stops on abort and says why", async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error("cancelled by test")), 100);
    const r = await runProcess(spec({ command: "sleep 10" }), ac.signal);
    expect(r.aborted).toBe(true);
    expect(r.abortReason).toBe("cancelled by test");
    expect(r.durationMs).toBeLessThan(5_000);
  });

  it("stops on the executor's RunAbort too, and one aborted before the start never runs the program", async () => {
    const abort = new RunAbort();
    setTimeout(() => abort.abort(new Error("lease lost")), 100);
    const r = await runProcess(spec({ command: "sleep 10" }), abort);
    expect(r).toMatchObject({ aborted: true, abortReason: "lease lost" });
    expect(r.durationMs).toBeLessThan(5_000);

    const early = new RunAbort();
    early.abort(new Error("cancelled"));
    const marker = join(cwd, "ran-anyway");
    const e = await runProcess(spec({ command: `sleep 2; touch ${marker}` }), early);
    expect(e).toMatchObject({ aborted: true, abortReason: "cancelled" });
    expect(readdirSync(cwd)).not.toContain("ran-anyway");
  });

  it("reports a program that cannot be started", async () => {
    const r = await runProcess(spec({ argv: ["/no/such/program"] }), new AbortController().signal);
    expect(r.exitCode).toBe(127);
    expect(r.outputTail).toMatch(/\/no\/such\/program.*not found/);
    const bare = await runProcess(spec({ argv: ["/no/such/program"], dieWithPid: null }), new AbortController().signal);
    expect(bare.spawnError).toMatch(/ENOENT/);
  });

  it("keeps only the tail of large output and marks it truncated", async () => {
    const r = await runProcess(spec({ command: "seq 1 100000", tailBytes: 1024 }), new AbortController().signal);
    expect(r.truncated).toBe(true);
    expect(Buffer.byteLength(r.outputTail)).toBeLessThanOrEqual(1024);
    expect(r.outputTail.endsWith("99999\n100000\n")).toBe(true);
    expect(r.outputBytes).toBeGreaterThan(500_000);
  });

  it("does not wait for a daemonised child that keeps the pipes open", async () => {
    const started = Date.now();
    const r = await runProcess(spec({ command: "sleep 20 & echo started" }), new AbortController().signal);
    expect(r.exitCode).toBe(0);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe("RunAbort", () => {
  it("calls each listener once, with the first reason; a removed one never; none after the abort", () => {
    const abort = new RunAbort();
    const calls: string[] = [];
    const a = () => calls.push("a");
    const b = () => calls.push("b");
    abort.addEventListener("abort", a);
    abort.addEventListener("abort", b);
    abort.removeEventListener("abort", b);
    abort.abort("first");
    abort.abort("second");
    abort.addEventListener("abort", () => calls.push("late"));
    expect(calls).toEqual(["a"]);
    expect(abort).toMatchObject({ aborted: true, reason: "first" });
  });
});

describe("TailBuffer", () => {
  it("never cuts inside a UTF-8 character", () => {
    const t = new TailBuffer(5);
    t.push(Buffer.from("ééééé")); // 10 bytes
    const text = t.text();
    expect(text).not.toContain("\uFFFD");
    expect(text.length).toBeGreaterThan(0);
    expect(t.truncated).toBe(true);
  });
});

/** Pids of the live (non-zombie) processes in process group `pgid`. */
const groupMembers = (pgid: number) =>
  readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return fields[0] !== "Z" && Number(fields[2]) === pgid;
      } catch {
        return false;
      }
    })
    .map(Number);

const waitUntil = async (cond: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  return cond();
};

describe("die with the executor", () => {
  it("kills the run within a second when the executor is SIGKILLed", async () => {
    const { spawn } = await import("node:child_process");
    const pidFile = join(cwd, "orphan.pid");
    const script = `
      import { runProcess } from ${JSON.stringify(new URL("../../src/executor/process.ts", import.meta.url).pathname)};
      runProcess({ command: "echo $$ > ${pidFile}; sleep 30", argv: null, env: { PATH: "/usr/bin:/bin" }, cwd: ${JSON.stringify(cwd)}, timeoutMs: 60000 }, new AbortController().signal);
      setInterval(() => {}, 1000);
    `;
    const executor = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: "ignore" });
    const { readFile } = await import("node:fs/promises");
    let pid = 0;
    for (let i = 0; i < 100 && !pid; i++) {
      await new Promise((r) => setTimeout(r, 100));
      pid = Number((await readFile(pidFile, "utf8").catch(() => "")).trim());
    }
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(true);
    executor.kill("SIGKILL");
    const deadline = Date.now() + 3_000;
    while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(alive(pid)).toBe(false);
  });

  it("ends its watchdog once the program is gone, though the executor's pid lives on", async () => {
    // Spawned without runProcess, which would kill the group on exit: only the watchdog's own
    // checks can end it here. The watched pid is this test process, which stays alive throughout
    // (as an executor that is pid 1 in a container would).
    const [file, args] = commandLine({ command: null, argv: ["sleep", "1.5"], dieWithPid: process.pid, watchdogIntervalMs: 200 });
    const child = spawn(file, args, { detached: true, stdio: "ignore" });
    const exited = new Promise((r) => child.once("exit", r));
    // The program and its watchdog (and, at times, the watchdog's sleep).
    expect(await waitUntil(() => groupMembers(child.pid!).length >= 2, 1_400)).toBe(true);
    await exited;
    expect(await waitUntil(() => groupMembers(child.pid!).length === 0, 3_000)).toBe(true);
  });

  it("ends its watchdog when the deadline file it has seen is removed, leaving the program be", async () => {
    const deadlineFile = join(cwd, "removed.deadline");
    writeFileSync(deadlineFile, `${Math.floor(uptime() * 100) + 60_000}\n`);
    const [file, args] = commandLine({ command: null, argv: ["sleep", "30"], dieWithPid: process.pid, deadlineFile, watchdogIntervalMs: 200 });
    const child = spawn(file, args, { detached: true, stdio: "ignore" });
    try {
      expect(await waitUntil(() => groupMembers(child.pid!).filter((p) => p !== child.pid).length >= 1, 2_000)).toBe(true);
      rmSync(deadlineFile);
      // The watchdog (and its sleep) go; the program, the group's leader, stays.
      expect(await waitUntil(() => groupMembers(child.pid!).join() === String(child.pid), 3_000)).toBe(true);
      expect(alive(child.pid!)).toBe(true);
    } finally {
      process.kill(-child.pid!, "SIGKILL");
    }
  });

  it("bounds the check interval to 0.1–60 s in 0.1 s steps", () => {
    expect([watchdogSleep(0), watchdogSleep(149), watchdogSleep(1_000), watchdogSleep(1_260), watchdogSleep(10 ** 9)]).toEqual(["0.1", "0.1", "1.0", "1.3", "60.0"]);
  });

  it("keeps argv intact and the exit status of the program", async () => {
    const r = await runProcess(spec({ argv: ["/bin/sh", "-c", 'printf "%s|" "$@"; exit 7', "x", "a b", "$c"] }), new AbortController().signal);
    expect(r.exitCode).toBe(7);
    expect(r.outputTail).toBe("a b|$c|");
  });
});
