/**
 * An executor SIGKILLed while it starts runs leaves nothing behind (issue #27): no process of any
 * slot's uid outlives it (its launcher dies with it, every slot's sandbox with the launcher, every
 * run with its sandbox), and the cgroups it made are removed by the next executor that starts on the
 * node. Killed KAIROS_KILL_TEST_ROUNDS times (default 12; `npm run chaos` style runs set hundreds) at random moments of its starts.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openCgroups } from "../../src/executor/sandbox/cgroups.js";
import { REPO_ROOT, sleep, waitUntil } from "../chaos/harness.js";

const UID_BASE = 63_100;
const SLOTS = 4;
const ROUNDS = Number(process.env.KAIROS_KILL_TEST_ROUNDS ?? 12);
// `off`: the same kills against a node that starts a bubblewrap per run (to see the test fail there).
const LAUNCHER = process.env.KAIROS_KILL_TEST_LAUNCHER === "off" ? "off" : "on";
const workRoot = mkdtempSync(join(tmpdir(), "kairos-killtest-"));
const isRoot = process.getuid?.() === 0;

/** Pids of processes whose real uid is one of the slots'. */
function slotProcesses(): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, "utf8");
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
      // A zombie is dead already: init reaps it (on some machines, never).
      if (uid >= UID_BASE && uid < UID_BASE + SLOTS && !/^State:\s+Z/m.test(status)) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

/** Live processes of the slots' uids whose parent is init. */
function orphans(): number[] {
  return slotProcesses().filter((pid) => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      return /^PPid:\s+1$/m.test(status) && !/^State:\s+Z/m.test(status);
    } catch {
      return false;
    }
  });
}

/** This test's executors' cgroup parents (kairos-<tag>-<pid>) in every hierarchy. */
function killtestGroups(): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    } catch {
      return;
    }
    for (const n of names) {
      if (/^kairos-killtest-\d+$/.test(n)) found.push(join(dir, n));
      else if (depth < 3) walk(join(dir, n), depth + 1);
    }
  };
  walk("/sys/fs/cgroup", 0);
  return found;
}

function startNode(launcher: "on" | "off"): Promise<{ pid: number; exited: Promise<void> }> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/executor/fixtures/starting-node.ts", workRoot, String(UID_BASE), String(SLOTS), launcher], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("ready")) resolve({ pid: child.pid!, exited });
    });
    child.once("exit", (code, sig) => reject(new Error(`the node exited (${code ?? sig}) before it started a run`)));
  });
}

afterAll(async () => {
  // The last executor's groups: removed as the next executor on the node would (and ours after).
  const opened = openCgroups(`kairos-killtest-${process.pid}`);
  await opened.cgroups?.close();
  rmSync(workRoot, { recursive: true, force: true });
});

describe.runIf(process.platform === "linux" && isRoot)("an executor killed while it starts runs", () => {
  it(`leaves no process of a slot's uid and no cgroup behind, over ${ROUNDS} kills`, async () => {
    const deadPids: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const node = await startNode(LAUNCHER);
      // A random moment of its starts: some runs starting, some running, some ending.
      await sleep(Math.floor(Math.random() * 300));
      process.kill(node.pid, "SIGKILL");
      await node.exited;
      deadPids.push(node.pid);
      // Nothing of its slots outlives it (the kernel needs a moment to end each namespace).
      await waitUntil(`no process of a slot's uid after kill ${round + 1}`, () => slotProcesses().length === 0, 5_000, 20).catch(() => {
        throw new Error(`round ${round + 1}: processes of the slots' uids outlived their executor: ${slotProcesses().join(", ")}`);
      });
    }
    // The next executor on the node removes what the dead ones left in the cgroup hierarchies.
    const last = await startNode(LAUNCHER);
    await waitUntil("the dead executors' cgroups to be removed", () => killtestGroups().every((g) => !deadPids.some((p) => g.endsWith(`-${p}`))), 10_000, 50).catch(() => {
      throw new Error(`cgroups of dead executors left: ${killtestGroups().join(", ")}`);
    });
    process.kill(last.pid, "SIGKILL");
    await last.exited;
    await waitUntil("no process of a slot's uid at the end", () => slotProcesses().length === 0, 5_000, 20);
    expect(slotProcesses()).toEqual([]);
  }, 600_000);

  it("a process of a slot's uid that outlived its executor (reparented to init) is killed when the next one starts", async () => {
    // As a bubblewrap left by an executor that died in the instant it was starting it would be.
    execFileSync("setpriv", ["--reuid", String(UID_BASE + 1), "--regid", String(UID_BASE + 1), "--clear-groups", "--", "sh", "-c", "sleep 600 >/dev/null 2>&1 &"]);
    await waitUntil("the orphan to be running", () => slotProcesses().length === 1, 5_000, 20);
    const node = await startNode(LAUNCHER);
    try {
      // The node's own sandboxes run as the slots' uids too: the orphan is the one whose parent is init.
      await waitUntil("the orphan to be killed", () => orphans().length === 0, 5_000, 20);
    } finally {
      process.kill(node.pid, "SIGKILL");
      await node.exited;
    }
  });
});
