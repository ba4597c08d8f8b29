/**
 * Attempt cgroups never pile up on a node: a group still busy when its run ends is removed later,
 * and what an executor that died without closing left (`kairos-<tag>-<pid>` of a pid that is gone)
 * is removed by the next executor to start; a live executor's groups are never touched.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openCgroups } from "../../src/executor/sandbox/cgroups.js";

/** This process's group in the v1 pids hierarchy, or null (v2, or no cgroups here). */
function pidsRoot(): string | null {
  const line = readFileSync("/proc/self/cgroup", "utf8").split("\n").find((l) => /^\d+:pids:/.test(l));
  const root = line ? join("/sys/fs/cgroup/pids", line.split(":")[2]!) : null;
  return root && existsSync(root) ? root : null;
}

const root = process.getuid?.() === 0 ? pidsRoot() : null;

describe.runIf(root !== null)("attempt cgroups", () => {
  it("removes a dead executor's groups at the next start, and leaves a live one's", () => {
    const deadPid = 4_000_000 - Math.floor(Math.random() * 1000); // above pid_max: never alive
    const dead = join(root!, `kairos-deadbeef-${deadPid}`);
    mkdirSync(join(dead, "run-1"), { recursive: true });
    const live = join(root!, `kairos-livebeef-${process.ppid}`);
    mkdirSync(live, { recursive: true });
    const opened = openCgroups(`kairos-t${process.pid}-${process.pid}`);
    expect(opened.cgroups).not.toBeNull();
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    void opened.cgroups!.close();
    rmdirSync(live);
  });

  it("removes every attempt's group by close, also one that was busy when its run ended", async () => {
    const parent = `kairos-c${process.pid}-${process.pid}`;
    const opened = openCgroups(parent);
    const cg = opened.cgroups!;
    const a = cg.create("busy-run", { cpu: 1, memoryMb: 64, pids: 8 });
    // A process inside keeps the group busy: its removal fails now and is retried later.
    const { spawn } = await import("node:child_process");
    const child = spawn("/bin/sh", ["-c", `echo $$ > ${a.procsFiles[0]}; exec sleep 0.3`], { stdio: "ignore" });
    await new Promise((r) => setTimeout(r, 100));
    a.remove();
    await new Promise((r) => child.once("exit", r));
    await cg.close();
    expect(existsSync(join(root!, parent))).toBe(false);
  });
});
