/**
 * Vitest global setup: starts a private `redis-server` on a free loopback port for the whole run,
 * so tests never touch a Redis someone else uses on 6379 and a fresh machine needs no setup beyond
 * the redis-server binary. Set KAIROS_TEST_REDIS_URL to use an existing server instead.
 */
import { execFileSync } from "node:child_process";
import type { TestProject } from "vitest/node";
import { describeMissing, missingRequirements } from "../../scripts/requirements.mjs";
import { startRedis } from "../support/local-redis.js";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // `npm test` has refused to start without them (pretest); a run of chosen files is told here
  // what is missing, since those files may not need it (scripts/requirements.mjs).
  const missing = missingRequirements();
  if (missing.length > 0) process.stderr.write(`\nWarning: tests that need these will fail. ${describeMissing(missing)}\n\n`);
  // The executor's launcher (a C program): built again when its source is newer than the binary.
  execFileSync(process.execPath, ["scripts/build-native.mjs"], { stdio: "inherit" });
  // The web console (test/console drives the built one): built again when a source is newer.
  execFileSync(process.execPath, ["scripts/build-console.mjs"], { stdio: "inherit" });
  const external = process.env.KAIROS_TEST_REDIS_URL;
  if (external) {
    project.provide("redisUrl", external);
    return async () => {};
  }
  const redis = await startRedis({ hint: "or set KAIROS_TEST_REDIS_URL to a server to use" });
  project.provide("redisUrl", redis.url);
  return () => redis.stop();
}
