/**
 * A private, throw-away redis-server: loopback only, a free port, no persistence (`--save ''
 * --appendonly no`), its own temp dir. The test suite (test/setup/global.ts), the chaos harness and
 * the benchmarks start their own, so they never use a shared Redis on 6379: they neither disturb
 * nor get disturbed by anyone else, and a fresh machine needs nothing but the redis-server binary.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";

export interface PrivateRedis {
  /** `redis://127.0.0.1:<port>` */
  url: string;
  host: string;
  port: number;
  /** SIGTERM the server, wait for it to exit (SIGKILL after 5 s), remove its temp dir. Idempotent. */
  stop(): Promise<void>;
}

/** A TCP port that was free on 127.0.0.1 a moment ago. */
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

/** Resolves once the server on `port` answers PING; fails early if `proc` exits. */
export async function waitForPing(port: number, proc: ChildProcess, deadlineMs: number): Promise<void> {
  const started = Date.now();
  let lastError: unknown;
  while (Date.now() - started < deadlineMs) {
    if (proc.exitCode !== null) throw new Error(`redis-server exited with code ${proc.exitCode} before answering PING`);
    const client = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on("error", () => {});
    try {
      await client.connect();
      if ((await client.ping()) === "PONG") {
        client.disconnect();
        return;
      }
    } catch (e) {
      lastError = e;
    }
    client.disconnect();
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer PING within ${deadlineMs} ms: ${String(lastError)}`);
}

/**
 * Spawn `redis-server` (from PATH) on a free loopback port and resolve once it answers PING.
 * The server is also killed if this process exits without calling `stop()`.
 */
export async function startRedis(
  opts: { port?: number; timeoutMs?: number; /** extra redis-server arguments */ args?: string[]; /** added to the error when redis-server cannot start */ hint?: string } = {},
): Promise<PrivateRedis> {
  const port = opts.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), "kairos-redis-"));
  const proc = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--loglevel", "warning", ...(opts.args ?? [])],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const cleanupOnExit = () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", cleanupOnExit);
  const spawnError = new Promise<never>((_, reject) =>
    proc.once("error", (e) => reject(new Error(`cannot start redis-server (${e.message}); install it (apt-get install redis-server)${opts.hint ? `; ${opts.hint}` : ""}`))),
  );
  try {
    await Promise.race([waitForPing(port, proc, opts.timeoutMs ?? 10_000), spawnError]);
  } catch (e) {
    cleanupOnExit();
    process.off("exit", cleanupOnExit);
    throw e;
  }
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((r) => proc.once("exit", r));
        proc.kill("SIGTERM");
        const t = setTimeout(() => proc.kill("SIGKILL"), 5_000);
        await exited;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
      process.off("exit", cleanupOnExit);
    })());
  return { url: `redis://127.0.0.1:${port}`, host: "127.0.0.1", port, stop };
}
