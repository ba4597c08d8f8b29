/**
 * Spawning redis-server processes for the Cluster and Sentinel helpers: each on a free loopback
 * port in its own temp dir, without persistence, SIGKILLed if this process exits without stopping
 * it. `kill9` is the fault the failover tests inject.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Redis } from "ioredis";
import { createRedisClient } from "../../src/shared-state/index.js";
import { freePort, waitForPing } from "../support/local-redis.js";

export const run = promisify(execFile);

/** What to kill if this process exits without stopping its servers: one exit listener for all of them. */
const atExit = new Set<() => void>();
process.on("exit", () => {
  for (const f of atExit) f();
});

export interface ServerProcess {
  host: string;
  port: number;
  /** Whether the process is still running. */
  alive(): boolean;
  /** SIGSTOP / SIGCONT: a frozen server reads nothing (its replication link stalls). */
  pause(): void;
  resume(): void;
  /** SIGKILL, no shutdown (no save, no goodbye to replicas or the cluster); resolves once it exited. */
  kill9(): Promise<void>;
  /** SIGTERM (SIGKILL after 5 s), then removes its temp dir. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts `redis-server` with `args` (a config file first for sentinels: `conf`, written into the
 * server's dir) on a free port and resolves once it answers PING.
 */
export async function spawnServer(opts: { args?: string[]; conf?: (port: number) => string; sentinel?: boolean; timeoutMs?: number }): Promise<ServerProcess> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "kairos-redis-"));
  const head: string[] = [];
  if (opts.conf) {
    const file = join(dir, "redis.conf");
    writeFileSync(file, opts.conf(port));
    head.push(file);
  }
  const proc: ChildProcess = spawn(
    "redis-server",
    [...head, ...(opts.sentinel ? ["--sentinel"] : []), "--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--loglevel", "warning", ...(opts.sentinel ? [] : ["--save", "", "--appendonly", "no"]), ...(opts.args ?? [])],
    { stdio: ["ignore", "ignore", "inherit"], cwd: dir },
  );
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  const alive = () => proc.exitCode === null && proc.signalCode === null;
  const cleanupOnExit = () => {
    if (alive()) proc.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  atExit.add(cleanupOnExit);
  const spawnError = new Promise<never>((_, reject) => proc.once("error", (e) => reject(new Error(`cannot start redis-server (${e.message}); install it (apt-get install redis-server)`))));
  try {
    await Promise.race([waitForPing(port, proc, opts.timeoutMs ?? 10_000), spawnError]);
  } catch (e) {
    cleanupOnExit();
    atExit.delete(cleanupOnExit);
    throw e;
  }
  let stopping: Promise<void> | undefined;
  return {
    host: "127.0.0.1",
    port,
    alive,
    pause: () => void (alive() && proc.kill("SIGSTOP")),
    resume: () => void (alive() && proc.kill("SIGCONT")),
    async kill9() {
      if (alive()) proc.kill("SIGKILL");
      await exited;
    },
    stop: () =>
      (stopping ??= (async () => {
        if (alive()) {
          proc.kill("SIGCONT");
          proc.kill("SIGTERM");
          const t = setTimeout(() => proc.kill("SIGKILL"), 5_000);
          await exited;
          clearTimeout(t);
        }
        rmSync(dir, { recursive: true, force: true });
        atExit.delete(cleanupOnExit);
      })()),
  };
}

/** A short-lived admin connection to one server (no reconnects, no retries). */
export async function withNode<T>(port: number, f: (r: Redis) => Promise<T>): Promise<T> {
  const r = createRedisClient(`redis://127.0.0.1:${port}`, { lazyConnect: true, maxRetriesPerRequest: 0, noReconnect: true }) as Redis;
  r.on("error", () => {});
  try {
    await r.connect();
    return await f(r);
  } finally {
    r.disconnect();
  }
}

/** Polls `check` every 100 ms until it returns true; throws `what` after `timeoutMs`. */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last: unknown = null;
  for (;;) {
    try {
      if (await check()) return;
    } catch (e) {
      last = e;
    }
    if (Date.now() > until) throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (last error: ${String(last)})` : ""}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `field:value` lines of an INFO reply. */
export function infoField(info: string, field: string): string | null {
  return new RegExp(`^${field}:(\\S+)`, "m").exec(info)?.[1] ?? null;
}
