/**
 * Starts the whole product in-process (`dev` role) on a free port with a private data dir and the
 * embedded MongoDB emulator, with timing knobs shrunk for tests. Optionally on Redis adapters.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import "reflect-metadata";
import { afterAll, beforeAll } from "vitest";
import { startKairos, type KairosApp } from "../../src/app/start.js";
import { loadConfig } from "../../src/config/index.js";
import { createLogger, silentLogger, type Logger } from "../../src/support/log.js";
import type { SchedulerOptions } from "../../src/scheduler/loop.js";
import { login } from "./graphql.js";

export const ADMIN = { username: "admin", password: "admin-password-for-tests" };

export interface TestApp extends KairosApp {
  url: string;
  wsUrl: string;
  dispose(): Promise<void>;
}

export async function startTestApp(
  opts: { redisUrl?: string; env?: Record<string, string>; scheduler?: Partial<SchedulerOptions>; log?: Logger } = {},
): Promise<TestApp> {
  const dataDir = await mkdtemp(join(tmpdir(), "kairos-test-"));
  const config = loadConfig("dev", {
    KAIROS_PORT: "0",
    KAIROS_DATA_DIR: dataDir,
    KAIROS_ADMIN_USER: ADMIN.username,
    KAIROS_ADMIN_PASSWORD: ADMIN.password,
    KAIROS_EXECUTOR_SLOTS: "4",
    KAIROS_SHARDS: "8",
    KAIROS_LEASE: "PT5S",
    ...(opts.redisUrl ? { REDIS_URL: opts.redisUrl, KAIROS_REDIS_PREFIX: `t-${Math.random().toString(36).slice(2)}` } : {}),
    ...opts.env,
  });
  const log = opts.log ?? (process.env.KAIROS_TEST_LOG ? createLogger("debug") : silentLogger());
  const app = await startKairos(config, {
    log,
    scheduler: { heartbeatMs: 200, maxSleepMs: 200, reaperMs: 500, ...opts.scheduler },
    executor: { pollMs: 100, drainGraceMs: 2_000 },
  });
  return {
    ...app,
    url: app.api!.url,
    wsUrl: app.api!.wsUrl,
    dispose: async () => {
      await app.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * One test app for the file: started (and the administrator logged in) before its tests,
 * disposed after them. Read `.app` and `.admin` inside tests and hooks.
 */
export function useTestApp(opts: Parameters<typeof startTestApp>[0] = {}): { readonly app: TestApp; readonly admin: string } {
  let app: TestApp | undefined;
  let admin: string | undefined;
  beforeAll(async () => {
    app = await startTestApp(opts);
    admin = await login(app.url, ADMIN.username, ADMIN.password);
  });
  afterAll(async () => {
    await app?.dispose();
  });
  const started = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error("the test app is not started yet: use it inside tests and hooks");
    return v;
  };
  return {
    get app() {
      return started(app);
    },
    get admin() {
      return started(admin);
    },
  };
}
