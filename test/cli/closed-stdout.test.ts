/**
 * `kairos … | head -1`: a reader that stops early closes the pipe, and the next write of kairos
 * failed with EPIPE, ending it with "Unhandled 'error' event", a stack and exit 1. It ends quietly
 * with 141, as a tool killed by SIGPIPE (src/cli/output.ts). The built command line, offline.
 */
import { spawn } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { BIN, buildCli } from "./fixture.js";

beforeAll(buildCli, 300_000);

/** Runs kairos with its stdout's reading end closed at once: every write it makes finds no reader. */
function withClosedStdout(args: string[]): Promise<{ code: number | null; err: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent", NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.destroy();
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, err })));
}

describe("kairos writing to a closed pipe", { timeout: 120_000 }, () => {
  it("ends quietly with 141, not a stack", async () => {
    const [schema, preview] = await Promise.all([withClosedStdout(["schema", "json"]), withClosedStdout(["schedule", "* * * * * *", "--next", "100", "-o", "json"])]);
    for (const r of [schema, preview]) {
      expect(r.err).toBe("");
      expect(r.code).toBe(141);
    }
  });
});
