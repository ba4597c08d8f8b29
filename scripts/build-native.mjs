#!/usr/bin/env node
/**
 * Builds the executor's launcher (src/executor/sandbox/launcher.c → dist/native/kairos-launcher)
 * when a C compiler is on the machine and the binary is missing or older than its source
 * (scripts/stale.mjs). Without a compiler it says so and succeeds: executors then start each run
 * with its own bubblewrap (slower, and named in the node's isolation notes), so `npm ci && npm
 * start` works either way. Run by scripts/build.mjs and the test suite's global setup.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, renameSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { markBuilt, root, staleReason } from "./stale.mjs";

const SOURCE = "src/executor/sandbox/launcher.c";
const TARGET = "dist/native/kairos-launcher";

/** Builds the launcher if it is stale (or `force`), after telling `announce` why; returns whether it built. */
export function buildNative({ force = false, announce = () => {} } = {}) {
  if (process.platform !== "linux") return false;
  const why = force ? "--force" : staleReason({ output: TARGET, inputs: [SOURCE] });
  if (!why) return false;
  const cc = ["cc", "gcc", "clang"].find((c) => spawnSync(c, ["--version"], { stdio: "ignore" }).status === 0);
  if (!cc) {
    console.warn("kairos: no C compiler (apt-get install gcc): the executor's launcher is not built; sandboxed runs start one bubblewrap each (slower)");
    return false;
  }
  announce(why);
  const startedAt = Date.now();
  const target = join(root, TARGET);
  mkdirSync(dirname(target), { recursive: true });
  const tmp = `${target}.${process.pid}`;
  execFileSync(cc, ["-O2", "-Wall", "-Wextra", "-Werror", "-o", tmp, join(root, SOURCE)], { stdio: "inherit" });
  renameSync(tmp, target);
  markBuilt(TARGET, startedAt);
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) buildNative({ force: process.argv.includes("--force") });
