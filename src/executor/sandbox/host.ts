/**
 * What a node's sandbox needs of its host, apart from the sandbox itself: a work root the slot
 * users can reach, what this bubblewrap can do, and removing a run's directory tree at any depth.
 */
import { execFile, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Logger } from "../../support/index.js";
import type { SandboxMode } from "./isolation.js";

const isRoot = () => process.getuid?.() === 0;

/**
 * bubblewrap resolves a run's directories as the slot's user, so every directory above them must
 * let others pass (o+x). A work root under a private directory (a 0700 data dir) moves to a
 * root-owned directory under the system's temporary directory instead, and the log says so.
 */
export function reachableWorkRoot(o: { mode: SandboxMode | "auto"; workRoot: string; nodeTag: string; log: Logger }): string {
  if (o.mode === "none" || !isRoot()) return o.workRoot;
  let dir = dirname(resolve(o.workRoot));
  for (;;) {
    try {
      if ((statSync(dir).mode & 0o001) === 0) {
        const moved = join(tmpdir(), `kairos-runs-${o.nodeTag}`);
        o.log.info({ workRoot: o.workRoot, movedTo: moved, because: dir }, "run directories moved: the slot users cannot pass through a private directory above the work root");
        return moved;
      }
    } catch {
      // not made yet: its parent decides
    }
    const up = dirname(dir);
    if (up === dir) return o.workRoot;
    dir = up;
  }
}

/** bubblewrap 0.8+ can forbid user namespaces inside the sandbox. */
export function supportsDisableUserns(bwrap: string): boolean {
  const r = spawnSync(bwrap, ["--help"], { encoding: "utf8", timeout: 10_000 });
  return `${r.stdout ?? ""}${r.stderr ?? ""}`.includes("--disable-userns");
}

/**
 * Removes a run's directory tree, whatever the run made in it. Node's fs.rm works on full paths,
 * so a run that nests directories past PATH_MAX (4096 bytes of host path) makes it fail with
 * ENAMETOOLONG, leaving the tree (and its disk) behind and the slot unusable; GNU rm walks by
 * directory descriptors (openat), at any depth, and never follows a link or leaves the filesystem.
 */
export async function removeTree(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true });
  } catch {
    await new Promise<void>((resolve, reject) =>
      execFile("rm", ["-rf", "--one-file-system", "--", dir], (e) => (e ? reject(new Error(`rm -rf ${dir}: ${e.message}`)) : resolve())),
    );
  }
}

export function removeTreeSync(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    const r = spawnSync("rm", ["-rf", "--one-file-system", "--", dir], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`rm -rf ${dir}: ${(r.error?.message ?? r.stderr).trim()}`);
  }
}


/**
 * Processes of the slots' uids that no executor holds any more (reparented to init: an executor,
 * launcher or per-run bubblewrap that died before its parent-death signal held), SIGKILLed. A live
 * executor's are never touched: its sandboxes are the children of its launcher, its per-run
 * bubblewraps its own. Returns how many it killed.
 */
export function killOrphans(uidBase: number, slots: number): number {
  let killed = 0;
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return 0;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, "utf8");
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]);
      const zombie = /^State:\s+Z/m.test(status); // dead already, waiting for init to reap it
      if (uid >= uidBase && uid < uidBase + slots && ppid === 1 && !zombie) {
        process.kill(Number(name), "SIGKILL");
        killed++;
      }
    } catch {
      // gone meanwhile
    }
  }
  return killed;
}
