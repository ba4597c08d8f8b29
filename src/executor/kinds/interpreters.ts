/**
 * Which SCRIPT interpreters this node has: looked up when the executor starts, on the PATH its
 * runs see (the sandbox binds /usr and the system directories read-only at the same paths), and
 * published on the node document (`nodes { interpreters }`). The executor takes script runs only
 * of the interpreters it has: its takes name them (ReadyQueue.take; domain/job-kinds.ts readyQueueOf).
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { join } from "node:path";
import { SCRIPT_INTERPRETERS, type NodeInterpreter } from "../../domain/index.js";
import { SANDBOX_PATH } from "../sandbox/bwrap.js";

function findOnPath(name: string): string | null {
  for (const dir of SANDBOX_PATH.split(":")) {
    const p = join(dir, name);
    try {
      if (!statSync(p).isFile()) continue;
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * The interpreters found, of `only` when given (an operator's KAIROS_INTERPRETERS: a node can
 * decline to run an interpreter it has, never claim one it has not).
 */
export function detectInterpreters(only: readonly string[] | null): NodeInterpreter[] {
  const wanted = only ? SCRIPT_INTERPRETERS.filter((i) => only.includes(i)) : SCRIPT_INTERPRETERS;
  const found: NodeInterpreter[] = [];
  for (const name of wanted) {
    const path = findOnPath(name);
    if (!path) continue;
    // `sh` has no --version; its presence is enough.
    const r = name === "sh" ? null : spawnSync(path, ["--version"], { encoding: "utf8", timeout: 5_000, env: { PATH: SANDBOX_PATH } });
    if (r && (r.error || r.status !== 0)) continue;
    const first = r ? `${r.stdout ?? ""}${r.stderr ?? ""}`.trim().split("\n")[0]!.slice(0, 200) : "";
    found.push({ name, path, version: first || null });
  }
  return found;
}
