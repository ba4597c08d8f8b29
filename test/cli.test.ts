/** The `kairos` command as a user runs it: a real process, real signals. */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

function kairos(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args], {
    env: { ...process.env, KAIROS_LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
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
  it("dev prints where it listens and how to log in, serves, and exits 0 on SIGTERM", async () => {
    const dir = await mkdtemp(join(tmpdir(), "kairos-cli-"));
    try {
      const p = kairos(["dev", "--port", "0", "--data-dir", dir]);
      await until(() => /Admin password \(generated now, shown once\): \S+/.test(p.err()), 30_000);
      const url = /GraphQL \(HTTP and WebSocket\): (\S+)/.exec(p.err())![1]!;
      const res = await fetch(url.replace("/graphql", "/readyz"));
      expect(res.status).toBe(200);
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses a bad setting with exit code 2 and a message naming it", async () => {
    const p = kairos(["dev", "--port", "seventy"]);
    expect(await p.exited).toBe(2);
    expect(p.err()).toMatch(/KAIROS_PORT: "seventy" must be a whole number/);
    const q = kairos(["launch"]);
    expect(await q.exited).toBe(2);
    expect(q.err()).toMatch(/unknown command "launch"; use one of: dev, api, scheduler, executor, emulator/);
  });
});
