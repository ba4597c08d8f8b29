/**
 * A port that another program holds: the server ends with one line naming the port and the setting
 * to change (KAIROS_PORT / --port), a non-zero exit, no stack trace, and nothing started meanwhile.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer as createHttpServer } from "node:http";
import { createServer, type AddressInfo, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GraphQLSchema } from "graphql";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { attachWebSocket } from "../../src/api/ws-server.js";
import { startOpsServer } from "../../src/api/ops.js";
import { API_PORT, nameSetting } from "../../src/app/ports.js";
import type { QueryLimits } from "../../src/api/limits.js";
import type { Services } from "../../src/resolvers/index.js";
import { ListenError, listen, silentLogger } from "../../src/support/index.js";

/** Processes at once, at most: the tests that start `kairos` run side by side, two at a time (two cores, seconds of CPU each). */
const AT_ONCE = 2;
let running = 0;
const queued: Array<() => void> = [];

function kairos(args: string[], env: Record<string, string> = {}) {
  const started = running < AT_ONCE ? Promise.resolve() : new Promise<void>((r) => queued.push(r));
  running++;
  const exited = started.then(() => run(args, env)).finally(() => {
    running--;
    queued.shift()?.();
  });
  let stderr = "";
  void exited.then((r) => (stderr = r.err));
  return { exited: exited.then((r) => r.code), err: () => stderr };
}

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; err: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args], {
    env: { ...process.env, KAIROS_LOG_LEVEL: "warn", AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((r) => child.on("close", (code) => r({ code, err: stderr })));
}

let holder: Server;
let port: number;
let dir: string;

beforeAll(async () => {
  holder = createServer();
  await new Promise<void>((r) => holder.listen(0, "127.0.0.1", () => r()));
  port = (holder.address() as AddressInfo).port;
  dir = await mkdtemp(join(tmpdir(), "kairos-port-"));
});

afterAll(async () => {
  await new Promise<void>((r) => holder.close(() => r()));
  await rm(dir, { recursive: true, force: true });
});

// Each starts `kairos` from the sources (seconds on a loaded machine) and only reads the held port: side by side.
describe.concurrent("a taken port, as the command sees it", { timeout: 120_000 }, () => {
  it("dev --port: one line naming the port, KAIROS_PORT and --port; exit 2; nothing created", async () => {
    const dataDir = join(dir, "dev-data");
    const p = kairos(["dev", "--port", String(port), "--data-dir", dataDir]);
    expect(await p.exited).toBe(2);
    expect(p.err()).toBe(
      `kairos: port ${port} on 127.0.0.1 is already in use by another program: stop it, or choose another port with KAIROS_PORT=<port> or --port <port>\n`,
    );
    // Refused before anything started: no data dir, so no admin whose one-time password was never shown.
    expect(existsSync(dataDir)).toBe(false);
  });

  it("KAIROS_PORT in the environment gets the same line", async () => {
    const p = kairos(["dev", "--data-dir", join(dir, "env-data")], { KAIROS_PORT: String(port) });
    expect(await p.exited).toBe(2);
    expect(p.err()).toMatch(new RegExp(`^kairos: port ${port} on 127\\.0\\.0\\.1 is already in use .*KAIROS_PORT=<port> or --port <port>\\n$`));
  });

  it("a scheduler's metrics port names KAIROS_METRICS_PORT and --metrics-port", async () => {
    const p = kairos(["scheduler", "--metrics-port", String(port), "--host", "127.0.0.1"], {
      MONGO_URL: "mongodb://127.0.0.1:9/kairos",
      REDIS_URL: "redis://127.0.0.1:9",
    });
    expect(await p.exited).toBe(2);
    expect(p.err()).toBe(
      `kairos: port ${port} on 127.0.0.1 is already in use by another program: stop it, or choose another port with KAIROS_METRICS_PORT=<port> or --metrics-port <port>\n`,
    );
  });

  it("kairos emulator --port: the same line naming --port; a bad flag is one line too", async () => {
    const p = kairos(["emulator", "--port", String(port), "--data-dir", join(dir, "emulator-data")]);
    const q = kairos(["emulator", "--port", "many"]);
    expect(await p.exited).toBe(2);
    expect(p.err()).toBe(`kairos: port ${port} on 127.0.0.1 is already in use by another program: stop it, or choose another port with --port <port>\n`);
    expect(await q.exited).toBe(2);
    expect(q.err()).toBe("kairos: --port must be an integer from 0 to 65535, got 'many'\n");
  });
});

describe("a taken port, as the servers see it", () => {
  // The check before start-up can lose a race; the servers' own listen says the same thing.
  it("the API's HTTP server with its WebSocket side: a ListenError, and nothing printed by graphql-ws", async () => {
    const printed = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const http = createHttpServer();
      const ws = attachWebSocket(http, { services: {} as Services, schema: {} as GraphQLSchema, limits: {} as QueryLimits, addressOf: () => "", maxPayload: 1024 });
      const failed = await listen(http, port, "127.0.0.1").catch((e: unknown) => e);
      await ws.dispose();
      expect(failed).toBeInstanceOf(ListenError);
      expect((nameSetting(failed, API_PORT) as Error).message).toBe(
        `port ${port} on 127.0.0.1 is already in use by another program: stop it, or choose another port with KAIROS_PORT=<port> or --port <port>`,
      );
      expect(printed).not.toHaveBeenCalled();
    } finally {
      printed.mockRestore();
    }
  });

  it("the ops server rejects with a ListenError too", async () => {
    const failed = await startOpsServer(port, "127.0.0.1", silentLogger()).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ListenError);
    expect((failed as ListenError).code).toBe("EADDRINUSE");
  });

  it("a host that is not this machine's names KAIROS_HOST and --host", async () => {
    const failed = await listen(createServer(), 0, "192.0.2.1").catch((e: unknown) => e);
    expect((nameSetting(failed, API_PORT) as Error).message).toBe(
      "192.0.2.1 is not an address of this machine, so port 0 cannot be listened on there: set KAIROS_HOST or --host to an address of this machine (127.0.0.1, or 0.0.0.0 for all of them)",
    );
  });
});
