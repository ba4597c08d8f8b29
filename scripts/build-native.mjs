#!/usr/bin/env node
/**
 * Builds the executor's launcher (src/executor/sandbox/launcher.c → dist/native/kairos-launcher)
 * when a C compiler is on the machine and the binary is missing or older than its source. Without
 * a compiler it says so and exits 0: executors then start each run with its own bubblewrap (slower,
 * and named in the node's isolation notes), so `npm ci && npm start` works either way.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "src/executor/sandbox/launcher.c");
const target = join(root, "dist/native/kairos-launcher");

if (process.platform !== "linux") process.exit(0);
if (existsSync(target) && statSync(target).mtimeMs >= statSync(source).mtimeMs) process.exit(0);
const cc = ["cc", "gcc", "clang"].find((c) => spawnSync(c, ["--version"], { stdio: "ignore" }).status === 0);
if (!cc) {
  console.warn("kairos: no C compiler (apt-get install gcc): the executor's launcher is not built; sandboxed runs start one bubblewrap each (slower)");
  process.exit(0);
}
mkdirSync(dirname(target), { recursive: true });
const tmp = `${target}.${process.pid}`;
execFileSync(cc, ["-O2", "-Wall", "-Wextra", "-Werror", "-o", tmp, source], { stdio: "inherit" });
renameSync(tmp, target);
