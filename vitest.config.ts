import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import LongestFirst from "./test/setup/sequencer.js";

const emulatorSrc = (file: string) => fileURLToPath(new URL(`./packages/mongo-emulator/src/${file}`, import.meta.url));

export default defineConfig({
  // graphql 16 has no `exports` map: without this alias Vite loads index.mjs for our sources while
  // externalised dependencies get index.js, and graphql refuses "a type from another realm".
  //
  // The emulator workspace package resolves to its sources (as tsconfig's `paths` does for tsc and
  // tsx), so tests never run a stale build of it.
  resolve: {
    alias: [
      { find: /^graphql$/, replacement: "graphql/index.js" },
      { find: /^@kairos\/mongo-emulator$/, replacement: emulatorSrc("index.ts") },
      { find: /^@kairos\/mongo-emulator\/cli$/, replacement: emulatorSrc("cli.ts") },
    ],
  },
  test: {
    include: ["test/**/*.test.ts", "packages/*/test/**/*.test.ts", "console/test/**/*.test.ts"],
    environment: "node",
    globalSetup: ["test/setup/global.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: integration files start servers and child processes; keep contention bounded.
    // Three workers were tried (2026-11-28): the longest files, started first, are multi-process
    // clusters, and three of them starting at once on two cores missed their 120 s start under load.
    maxWorkers: 2,
    // Longest files first (durations of the last run, else test/setup/durations.json), so the
    // workers end together: a fresh clone has no durations of its own (test/setup/sequencer.ts).
    sequence: { sequencer: LongestFirst },
  },
});
