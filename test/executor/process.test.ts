import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunAbort } from "../../src/executor/abort.js";
import { TailBuffer, runProcess, type ProcessSpec } from "../../src/executor/process.js";

let cwd: string;
beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), "kairos-proc-"));
});
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

/** A plain (unsandboxed) program: `command` through /bin/sh -c, or `argv` executed directly. */
const spec = ({ command, argv, ...over }: Partial<ProcessSpec> & { command?: string; argv?: string[] }): ProcessSpec => ({
  file: argv ? argv[0]! : "/bin/sh",
  args: argv ? argv.slice(1) : ["-c", command ?? ""],
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

  it("reports the stop signal it sent to a program that caught it and exited, and none to one that ended by itself", async () => {
    const r = await runProcess(spec({ command: "trap 'exit 143' TERM; sleep 30 & wait", timeoutMs: 300 }), new AbortController().signal);
    expect({ timedOut: r.timedOut, exitCode: r.exitCode, signal: r.signal }).toEqual({ timedOut: true, exitCode: 143, signal: "SIGTERM" });
    // Its group cleaned up after it ended (a background child): no signal reported for that.
    const done = await runProcess(spec({ command: "sleep 30 >/dev/null 2>&1 & exit 0" }), new AbortController().signal);
    expect({ exitCode: done.exitCode, signal: done.signal }).toEqual({ exitCode: 0, signal: null });
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
    const r = await runProcess(spec({ command: "exec /no/such/program" }), new AbortController().signal);
    expect(r.exitCode).toBe(127);
    expect(r.outputTail).toMatch(/\/no\/such\/program.*not found/);
    const bare = await runProcess(spec({ argv: ["/no/such/program"] }), new AbortController().signal);
    expect(bare.spawnError).toMatch(/ENOENT/);
  });

  it("fails a program spawn refuses (a NUL byte in an argument) as a result, without throwing", async () => {
    const r = await runProcess(spec({ argv: ["/bin/echo", "a\u0000b"] }), new AbortController().signal);
    expect(r.spawnError).toMatch(/null bytes|NUL|\\u0000/i);
    expect(r.exitCode).toBeNull();
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

  it("interleaves stdout and stderr only between whole characters (a € cut between two reads of stdout, with an unfinished 😬 on stderr between them, read as �😬)", () => {
    const t = new TailBuffer(1024);
    t.push(Buffer.from("price: \xe2\x82", "latin1"), "stdout");
    t.push(Buffer.from("\xf0\x9f\x98", "latin1"), "stderr");
    t.push(Buffer.from("\xac euro\n", "latin1"), "stdout");
    // stderr's unfinished character is shown, as U+FFFD, once nothing can finish it.
    expect(t.text()).toBe("price: € euro\n\uFFFD");
    expect(t.total).toBe(19);
    // Finished later by its own stream, it is the character the program wrote.
    t.push(Buffer.from("\x80!", "latin1"), "stderr");
    expect(t.text()).toBe("price: € euro\n😀!");
  });
});

describe("arguments", () => {
  it("keeps argv intact and the exit status of the program", async () => {
    const r = await runProcess(spec({ argv: ["/bin/sh", "-c", 'printf "%s|" "$@"; exit 7', "x", "a b", "$c"] }), new AbortController().signal);
    expect(r.exitCode).toBe(7);
    expect(r.outputTail).toBe("a b|$c|");
  });
});
