/**
 * `kairos` at a server that takes the connection and never answers (a stalled process, a port
 * forward to nothing): it waited for undici's five minutes, login included, and then said "Headers
 * Timeout Error"; `kairos logs -f` waited for ever. A request, and a WebSocket's opening handshake,
 * now wait KAIROS_TIMEOUT (default PT1M) and say what they saw (src/cli/network.ts, client.ts). In-process (runCli), against a TCP server that accepts and stays silent.
 */
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runKairos, type InProcessRun } from "./in-process.js";

let server: Server;
let port = 0;
const sockets = new Set<Socket>();

const kairos = (argv: string[], env: Record<string, string>, stdin = ""): Promise<InProcessRun> =>
  runKairos(argv, { env: { XDG_CONFIG_HOME: "/nonexistent-kairos-config", ...env }, stdin });

beforeAll(async () => {
  server = createServer((s) => {
    sockets.add(s);
    s.on("error", () => undefined);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
});

describe("a server that never answers", () => {
  it("ends a command after KAIROS_TIMEOUT, saying what it saw and how to wait longer", async () => {
    const url = `http://127.0.0.1:${port}`;
    const r = await kairos(["get", "jobs"], { KAIROS_SERVER: url, KAIROS_TOKEN: "t", KAIROS_TIMEOUT: "PT1S" });
    expect(r.code).toBe(2);
    expect(r.err).toBe(`kairos: no answer from 127.0.0.1:${port} within 1 s (${url}/graphql took the request and sent nothing back): check that a Kairos server listens there and is not stalled, or set KAIROS_TIMEOUT=PT300S to wait longer\n`);
  });

  it("ends a login the same way", async () => {
    const r = await kairos(["login", "--server", `http://127.0.0.1:${port}`, "--username", "admin", "--password-stdin"], { KAIROS_TIMEOUT: "PT1S" }, "secret-password");
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`^kairos: no answer from 127\\.0\\.0\\.1:${port} within 1 s`));
    expect(r.err).not.toContain("secret-password");
  });

  it("ends kairos logs -f too: the WebSocket's opening handshake waits as long, then the server is asked once over HTTP", async () => {
    const r = await kairos(["logs", "6650c1f2e4b0a1b2c3d4e5f6", "-f"], { KAIROS_SERVER: `http://127.0.0.1:${port}`, KAIROS_TOKEN: "t", KAIROS_TIMEOUT: "PT1S" });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`^kairos: no answer from 127\\.0\\.0\\.1:${port} within 1 s`));
  });

  it("refuses a KAIROS_TIMEOUT that is no duration or out of range", async () => {
    const env = { KAIROS_SERVER: `http://127.0.0.1:${port}`, KAIROS_TOKEN: "t" };
    expect((await kairos(["get", "jobs"], { ...env, KAIROS_TIMEOUT: "30" })).err).toMatch(/^kairos: KAIROS_TIMEOUT: "30" is not an ISO-8601 duration/);
    expect((await kairos(["get", "jobs"], { ...env, KAIROS_TIMEOUT: "PT0.5S" })).err).toBe('kairos: KAIROS_TIMEOUT: must be from PT1S to PT1H (got "PT0.5S")\n');
  });
});
