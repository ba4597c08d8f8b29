/**
 * The process-group watchdog enforces the lease deadline on its own (ProcessSpec.deadlineFile), so
 * a run dies before its lease ends even when the executor is frozen and cannot kill it.
 * test/chaos/zombie.test.ts checks the same end to end with a SIGSTOPped executor.
 */
import { writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir, uptime } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runProcess, type ProcessSpec } from "../../src/executor/process.js";

let cwd: string;
beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), "kairos-deadline-"));
});
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

const spec = (over: Partial<ProcessSpec>): ProcessSpec => ({
  command: "sleep 10",
  argv: null,
  env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
  cwd,
  timeoutMs: 20_000,
  killGraceMs: 500,
  ...over,
});

/** Uptime centiseconds `ms` from now, as the executor writes them. */
const deadlineIn = (ms: number) => `${Math.floor(uptime() * 100) + Math.floor(ms / 10)}\n`;

describe.runIf(process.platform === "linux")("lease deadline watchdog", () => {
  it("kills the run's process group once the deadline in the file has passed", async () => {
    const file = join(cwd, "a.deadline");
    writeFileSync(file, deadlineIn(600));
    const started = Date.now();
    const r = await runProcess(spec({ deadlineFile: file }), new AbortController().signal);
    const took = Date.now() - started;
    expect(r.signal).toBe("SIGKILL");
    expect(took).toBeGreaterThanOrEqual(550);
    expect(took).toBeLessThan(2_500);
  });

  it("follows a deadline that is moved while the run is going, and quotes the path", async () => {
    const file = join(cwd, "it's moved.deadline");
    writeFileSync(file, deadlineIn(500));
    const mover = setInterval(() => writeFileSync(file, deadlineIn(500)), 100);
    const started = Date.now();
    const r = await runProcess(spec({ command: "sleep 1.5; exit 4", deadlineFile: file }), new AbortController().signal);
    clearInterval(mover);
    expect(r.exitCode).toBe(4);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
  });

  it("uses the deadline given at spawn until the file exists", async () => {
    const started = Date.now();
    const r = await runProcess(
      spec({ deadlineFile: join(cwd, "not-yet.deadline"), initialDeadline: Number(deadlineIn(600).trim()), watchdogIntervalMs: 200 }),
      new AbortController().signal,
    );
    expect(r.signal).toBe("SIGKILL");
    expect(Date.now() - started).toBeGreaterThanOrEqual(550);
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  it("lets a file written later move the deadline given at spawn", async () => {
    const file = join(cwd, "later.deadline");
    setTimeout(() => writeFileSync(file, deadlineIn(5_000)), 100);
    const r = await runProcess(
      spec({ command: "sleep 1.5; exit 4", deadlineFile: file, initialDeadline: Number(deadlineIn(500).trim()), watchdogIntervalMs: 200 }),
      new AbortController().signal,
    );
    expect(r.exitCode).toBe(4);
  });

  it("ignores a missing or garbled file (the pid check still applies)", async () => {
    const garbled = join(cwd, "garbled.deadline");
    writeFileSync(garbled, "not a number\n");
    const a = await runProcess(spec({ command: "sleep 1; exit 0", deadlineFile: join(cwd, "missing.deadline") }), new AbortController().signal);
    const b = await runProcess(spec({ command: "sleep 1; exit 0", deadlineFile: garbled }), new AbortController().signal);
    expect(a.exitCode).toBe(0);
    expect(b.exitCode).toBe(0);
  });
});
