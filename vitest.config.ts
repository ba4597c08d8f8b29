import { defineConfig } from "vitest/config";

export default defineConfig({
  // graphql 16 has no `exports` map: without this alias Vite loads index.mjs for our sources while
  // externalised dependencies get index.js, and graphql refuses "a type from another realm".
  resolve: { alias: [{ find: /^graphql$/, replacement: "graphql/index.js" }] },
  test: {
    include: ["test/**/*.test.ts"],
    environment: "node",
    globalSetup: ["test/setup/global.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: integration files start servers and child processes; keep contention bounded.
    maxWorkers: 2,
  },
});
