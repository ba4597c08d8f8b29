/**
 * The node supervisor enforces what the executor cannot while frozen or dead: lease deadlines,
 * disk caps, and the end of every run when the executor goes away. It is a separate process, so
 * these hold while this (test) process does nothing at all. test/chaos/zombie.test.ts checks the
 * deadline end to end with a SIGSTOPped executor.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { monotonicMs, Supervisor, type SupervisorKill } from "../../src/executor/sandbox/supervisor.js";
import { supervisorKills } from "../chaos/analyze.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kairos-supervisor-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
};
const waitUntil = async (cond: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  return cond();
};
/** A process group: a shell and a grandchild, as a run's would be. */
const group = (cmd = "sleep 30 & sleep 30"): ChildProcess => spawn("/bin/sh", ["-c", cmd], { detached: true, stdio: "ignore" });

function supervisor() {
  const kills: Array<[string, SupervisorKill]> = [];
  const s = new Supervisor((id, why) => kills.push([id, why]), () => undefined);
  s.start();
  return { s, kills };
}

describe.runIf(process.platform === "linux")("run supervisor", () => {
  it("kills a run's whole process group at its deadline, and says so", async () => {
    const { s, kills } = supervisor();
    const g = group();
    s.watch("r1:1", g.pid!, true, monotonicMs() + 400, 0, dir);
    const started = Date.now();
    expect(await waitUntil(() => !alive(g.pid!), 3_000)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    await waitUntil(() => kills.length > 0, 2_000); // its report may trail the kill
    expect(kills).toEqual([["r1:1", "deadline"]]);
    await s.stop();
  });

  it("forget settles only once the supervisor's own kill of the run has been reported (the end is reported with its cause)", async () => {
    const { s, kills } = supervisor();
    const g = group();
    s.watch("r9:1", g.pid!, true, monotonicMs() + 200, 0, dir);
    // The executor sees the exit first; the supervisor's word comes on its own pipe, maybe later.
    expect(await waitUntil(() => !alive(g.pid!), 3_000)).toBe(true);
    await s.forget("r9:1");
    expect(kills).toEqual([["r9:1", "deadline"]]);
    await s.forget("r9:1"); // forgotten already: settles at once
    await s.stop();
  });

  it("follows a deadline moved by renewals, and forgets a run that ended", async () => {
    const { s, kills } = supervisor();
    const g = group();
    s.watch("r2:1", g.pid!, true, monotonicMs() + 300, 0, dir);
    const mover = setInterval(() => s.extend("r2:1", monotonicMs() + 300), 100);
    await new Promise((r) => setTimeout(r, 900));
    clearInterval(mover);
    expect(alive(g.pid!)).toBe(true);
    s.forget("r2:1");
    await new Promise((r) => setTimeout(r, 500));
    expect(alive(g.pid!)).toBe(true);
    expect(kills).toEqual([]);
    process.kill(-g.pid!, "SIGKILL");
    await s.stop();
  });

  it("kills a run whose directory grows past its disk cap", async () => {
    const { s, kills } = supervisor();
    const runDir = await mkdtemp(join(dir, "disk-"));
    // 20 files of 1 MiB each, one every 50 ms, against a cap of 4 MiB.
    const g = group(`cd ${runDir} && for i in $(seq 20); do head -c 1048576 /dev/zero > f$i; sleep 0.05; done; sleep 30`);
    s.watch("r3:1", g.pid!, true, monotonicMs() + 60_000, 4 * 1048576, runDir);
    expect(await waitUntil(() => !alive(g.pid!), 5_000)).toBe(true);
    await waitUntil(() => kills.length > 0, 2_000); // its report may trail the kill
    expect(kills).toEqual([["r3:1", "disk"]]);
    await s.stop();
  });

  it("kills every run it watches when the executor goes away (its stdin closes)", async () => {
    const { s } = supervisor();
    const g = group();
    s.watch("r4:1", g.pid!, true, monotonicMs() + 60_000, 0, dir);
    await new Promise((r) => setTimeout(r, 100));
    await s.stop(); // closes its stdin, as the executor's death would
    expect(await waitUntil(() => !alive(g.pid!), 3_000)).toBe(true);
  });
});

describe("when its executor is SIGKILLed", () => {
  it("kills the executor's runs at once and says so on the executor's log stream, in the executor's log format", async () => {
    const entry = new URL("../../src/executor/sandbox/supervisor.ts", import.meta.url).href;
    const script = `
      const { Supervisor, monotonicMs } = await import(${JSON.stringify(entry)});
      const { spawn } = await import("node:child_process");
      const s = new Supervisor(() => undefined, () => undefined);
      s.start();
      const g = spawn("/bin/sh", ["-c", "sleep 30 & sleep 30"], { detached: true, stdio: "ignore" });
      s.watch("r5:7", g.pid, true, monotonicMs() + 60000, 0, ${JSON.stringify(dir)});
      setTimeout(() => process.stdout.write("ready " + g.pid + "\\n"), 200);
      setInterval(() => undefined, 1000);
    `;
    const executor = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    executor.stdout!.on("data", (b: Buffer) => (out += b.toString()));
    executor.stderr!.on("data", (b: Buffer) => (err += b.toString()));
    expect(await waitUntil(() => /ready \d+/.test(out), 20_000), err).toBe(true);
    const runPid = Number(/ready (\d+)/.exec(out)![1]);
    expect(alive(runPid)).toBe(true);
    const killedAt = Date.now();
    executor.kill("SIGKILL");
    expect(await waitUntil(() => !alive(runPid), 3_000)).toBe(true);
    expect(await waitUntil(() => err.includes("the supervisor killed an attempt"), 3_000), err).toBe(true);
    const line = JSON.parse(err.split("\n").find((l) => l.includes("the supervisor killed an attempt"))!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: "error", pid: executor.pid, runId: "r5", token: 7, why: "executor-gone", msg: "the supervisor killed an attempt: its executor is gone" });
    expect(Date.parse(String(line.time))).toBeGreaterThanOrEqual(killedAt - 5);
    // The chaos analysis reads it as the end of that attempt on that executor.
    expect(supervisorKills(err)).toEqual([{ runId: "r5", pid: executor.pid, at: Date.parse(String(line.time)) }]);
  });
});
