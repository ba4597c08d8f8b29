/**
 * One `kairos dev` for an API bench: the compiled product (`buildKairos`, as `kairos` runs in
 * production) in its own process on a free loopback port, with its embedded MongoDB emulator in a
 * fresh data directory, the administrator's password known, logging at warn. Ready once /healthz
 * answers; `stop` ends it and removes its data.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildKairos, BUILD_DIR, Child } from "./kairos-cluster.js";
import { freePort } from "./redis.js";

export const DEV_ADMIN_PASSWORD = "bench-admin-password";
const STARTUP_MS = 120_000;

export interface DevServer {
  /** http://127.0.0.1:PORT/graphql */
  url: string;
  child: Child;
  stop(): Promise<void>;
}

/**
 * Starts `kairos dev` with `env` over the defaults above (KAIROS_EXECUTOR_SLOTS, KAIROS_AUDIT,
 * KAIROS_RATE_* …). `name` labels its log lines. Builds the product first (once per bench process;
 * a type error is printed and the output used anyway).
 */
export async function startKairosDev(name: string, env: Record<string, string> = {}): Promise<DevServer> {
  const warning = await buildKairos();
  if (warning) console.error(warning);
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), `kairos-bench-${name}-`));
  const proc = spawn(process.execPath, [join(BUILD_DIR, "main.js"), "dev"], {
    env: {
      ...process.env,
      KAIROS_PORT: String(port),
      KAIROS_DATA_DIR: dataDir,
      KAIROS_ADMIN_PASSWORD: DEV_ADMIN_PASSWORD,
      KAIROS_LOG_LEVEL: "warn",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const child = new Child(name, proc);
  const stop = async () => {
    await child.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  const base = `http://127.0.0.1:${port}`;
  // Up to 40 s to start on a 2-core host at load 27 (08:44 UTC, 2026-11-28): room for more.
  const deadline = Date.now() + STARTUP_MS;
  try {
    for (;;) {
      if (!child.alive) throw new Error(`kairos dev (${name}) exited: ${child.firstLines.join(" | ")}`);
      if (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) break;
      if (Date.now() > deadline) throw new Error(`kairos dev (${name}) did not answer /healthz within ${STARTUP_MS / 1000} s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { url: `${base}/graphql`, child, stop };
}
