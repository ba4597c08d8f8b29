#!/usr/bin/env node
/**
 * Builds the web console (console/ → dist/console) when it is missing or a source under console/
 * or generated/client/, or the installed dependencies, changed after the build (scripts/stale.mjs).
 * Run by scripts/build.mjs (`npm run build`, `npm start`) and by the test suite's global setup, so
 * the browser tests never drive a stale console.
 */
import { execFileSync } from "node:child_process";
import { existsSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { INSTALLED, markBuilt, root, staleReason } from "./stale.mjs";

const OUTPUT = "dist/console/index.html";

/** Builds the console if it is stale (or `force`), after telling `announce` why; returns whether it built. */
export function buildConsole({ force = false, announce = () => {} } = {}) {
  const why = force ? "--force" : staleReason({ output: OUTPUT, inputs: ["console", "generated/client", ...INSTALLED] });
  if (!why) return false;
  announce(why);
  const startedAt = Date.now();
  // Built beside the live copy and swapped in by renames: a test or server reading dist/console
  // meanwhile (another run in the same checkout) never sees it half-written or empty.
  const fresh = join(root, `dist/console.build-${process.pid}`);
  const old = join(root, `dist/console.old-${process.pid}`);
  execFileSync(process.execPath, [join(root, "node_modules/vite/bin/vite.js"), "build", "--config", "console/vite.config.ts", "--logLevel", "warn", "--outDir", fresh], {
    cwd: root,
    stdio: "inherit",
    // Always the production build: called from vitest, NODE_ENV is "test", and Vite would bundle React's development build.
    env: { ...process.env, NODE_ENV: "production" },
  });
  const live = join(root, "dist/console");
  if (existsSync(live)) renameSync(live, old);
  renameSync(fresh, live);
  rmSync(old, { recursive: true, force: true });
  markBuilt(OUTPUT, startedAt);
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) buildConsole({ force: process.argv.includes("--force") });
