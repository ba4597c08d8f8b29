/**
 * Vitest global setup: starts a private `redis-server` on a free loopback port for the whole run,
 * so tests never touch a Redis someone else uses on 6379 and a fresh machine needs no setup beyond
 * the redis-server binary. Set KAIROS_TEST_REDIS_URL to use an existing server instead.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function waitForRedis(port: number, proc: ChildProcess, deadlineMs: number): Promise<void> {
  const { Redis } = await import("ioredis");
  const started = Date.now();
  let lastError: unknown;
  while (Date.now() - started < deadlineMs) {
    if (proc.exitCode !== null) throw new Error(`redis-server exited with code ${proc.exitCode} before accepting connections`);
    const client = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      await client.connect();
      await client.ping();
      client.disconnect();
      return;
    } catch (e) {
      lastError = e;
      client.disconnect();
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`redis-server on port ${port} did not answer within ${deadlineMs} ms: ${String(lastError)}`);
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.KAIROS_TEST_REDIS_URL;
  if (external) {
    project.provide("redisUrl", external);
    return async () => {};
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "kairos-test-redis-"));
  const proc = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--loglevel", "warning"],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const spawnError = new Promise<never>((_, reject) =>
    proc.once("error", (e) =>
      reject(new Error(`cannot start redis-server (${e.message}); install it (apt-get install redis-server) or set KAIROS_TEST_REDIS_URL`)),
    ),
  );
  await Promise.race([waitForRedis(port, proc, 10_000), spawnError]);
  project.provide("redisUrl", `redis://127.0.0.1:${port}`);
  return async () => {
    proc.kill("SIGTERM");
    await new Promise((r) => (proc.exitCode !== null ? r(null) : proc.once("exit", r)));
    rmSync(dir, { recursive: true, force: true });
  };
}
