/** The `kairos` command as a user runs it: a real process, real signals. */
import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

/** Every process a test started: one still running when its test ends (an assertion failed) is killed. */
const started: Array<ReturnType<typeof spawn>> = [];
afterEach(() => {
  for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

function kairos(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args], {
    env: { ...process.env, KAIROS_LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

async function until(fn: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("kairos CLI", () => {
  it("dev prints where it listens and how to log in, keeps the password where the banner says, serves, and exits 0 on SIGTERM", async () => {
    const dir = await mkdtemp(join(tmpdir(), "kairos-cli-"));
    try {
      // Not a terminal: the logs stay JSON, one object per line, for whatever reads them.
      const p = kairos(["dev", "--port", "0", "--data-dir", dir], { KAIROS_LOG_LEVEL: "info" });
      await until(() => /Admin password \(generated now\): \S+/.test(p.err()), 120_000);
      const url = /GraphQL \(HTTP and WebSocket\): (\S+)/.exec(p.err())![1]!;
      const res = await fetch(url.replace("/graphql", "/readyz"));
      expect(res.status).toBe(200);
      const password = /Admin password \(generated now\): (\S+)/.exec(p.err())![1]!;
      const file = /also kept in (\S+) \(mode 0600\)/.exec(p.err())![1]!;
      expect(file).toBe(join(dir, "admin-password.txt"));
      expect(readFileSync(file, "utf8")).toBe(`${password}\n`);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      // No colours where stderr is no terminal, and no warning about the AWS SDK's future Node needs
      // (its version is pinned) between the lines a new user reads.
      expect(p.err()).not.toContain("\x1b[");
      expect(p.err()).not.toContain("NodeVersionSupportWarning");
      const lines = p.out().trim().split("\n");
      expect(lines.length).toBeGreaterThan(2);
      for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
      expect(lines.map((l) => JSON.parse(l) as { msg: string }).some((l) => l.msg === "bootstrap admin created")).toBe(true);
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);
      // Started again, the banner names the file the password is in.
      const again = kairos(["dev", "--port", "0", "--data-dir", dir]);
      await until(() => /Admin password: /.test(again.err()), 120_000);
      expect(again.err()).toContain(`Admin password: the one generated at the first start, kept in ${file}`);
      again.child.kill("SIGTERM");
      expect(await again.exited).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);

  // The two processes (seconds each from the sources on a loaded machine) do not depend on each other: side by side.
  it("refuses a bad setting with exit code 2 and a message naming it", async () => {
    const p = kairos(["dev", "--port", "seventy"]);
    const q = kairos(["launch"]);
    expect(await p.exited).toBe(2);
    expect(p.err()).toMatch(/--port \(KAIROS_PORT\): "seventy" must be a whole number from 0 to 65535: it is not a number/);
    expect(await q.exited).toBe(2);
    expect(q.err()).toMatch(/unknown command "launch"; use one of: dev, api, scheduler, executor, emulator/);
  }, 120_000);
});
