#!/usr/bin/env node
/**
 * `npm run build` (also run by `npm ci` through `prepare`, and by `npm start` first): builds what
 * changed since the last build and nothing else, so a start after a build begins at once.
 *
 * Steps, in order, each skipped when its output is newer than all of its inputs (scripts/stale.mjs):
 *   1. the MongoDB emulator package (packages/mongo-emulator → its dist/, which the product
 *      compiles against);
 *   2. the product (src/ minus src/cli → dist/);
 *   3. the command line (src/cli, with the src/ files and generated client it imports → dist/cli/);
 *   4. the executor's launcher (C, scripts/build-native.mjs);
 *   5. the web console (Vite, scripts/build-console.mjs).
 * The TypeScript steps are incremental (.tsbuildinfo): a step that runs rechecks what changed.
 * `npm run build -- --force` runs every step regardless.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { buildConsole } from "./build-console.mjs";
import { buildNative } from "./build-native.mjs";
import { TSC_STEPS } from "./build-steps.mjs";
import { markBuilt, markFailed, root, staleReason } from "./stale.mjs";

const force = process.argv.includes("--force");

const tsc = join(root, "node_modules/typescript/bin/tsc");

function say(what, why) {
  process.stderr.write(`kairos build: ${what} (${why})\n`);
}

for (const step of TSC_STEPS) {
  const why = force ? "--force" : staleReason(step);
  if (!why) continue;
  say(`compiling ${step.name}`, why);
  const startedAt = Date.now();
  const r = spawnSync(process.execPath, [tsc, "-p", step.project], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) {
    markFailed(step.output);
    process.stderr.write(`kairos build: ${step.name} did not compile (errors above)\n`);
    process.exit(r.status ?? 1);
  }
  markBuilt(step.output, startedAt);
}

buildNative({ force, announce: (why) => say("compiling the executor's launcher", why) });
buildConsole({ force, announce: (why) => say("building the web console", why) });
