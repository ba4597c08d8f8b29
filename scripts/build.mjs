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
import { INSTALLED, markBuilt, markFailed, root, staleReason } from "./stale.mjs";

const force = process.argv.includes("--force");

/** The TypeScript projects: their config, the files they read, and the tsbuildinfo standing for their output. */
const TSC_STEPS = [
  {
    name: "the MongoDB emulator package",
    project: "packages/mongo-emulator/tsconfig.build.json",
    output: "packages/mongo-emulator/dist/.tsbuildinfo",
    also: ["packages/mongo-emulator/dist/index.js"],
    inputs: ["packages/mongo-emulator/src", "packages/mongo-emulator/tsconfig.build.json", "packages/mongo-emulator/package.json", "tsconfig.json", ...INSTALLED],
  },
  {
    name: "the server",
    project: "tsconfig.build.json",
    output: "dist/.tsbuildinfo",
    also: ["dist/main.js"],
    // It compiles against the emulator's built declarations (tsconfig.build.json).
    inputs: ["src", "packages/mongo-emulator/dist", "tsconfig.json", "tsconfig.build.json", ...INSTALLED],
    exclude: ["src/cli", "src/executor/sandbox/launcher.c"],
  },
  {
    name: "the command line",
    project: "src/cli/tsconfig.build.json",
    output: "dist/cli/.tsbuildinfo",
    also: ["dist/cli/src/cli/index.js"],
    // src/cli imports other folders of src/ and the generated client: any of them may change it.
    inputs: ["src", "generated/client", "tsconfig.json", "tsconfig.build.json", ...INSTALLED],
    exclude: ["src/executor/sandbox/launcher.c"],
  },
];

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
