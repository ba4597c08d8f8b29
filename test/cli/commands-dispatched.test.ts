/**
 * Every command of the CLI (CLI_COMMANDS in src/cli/program.ts) is dispatched by src/main.ts, whose
 * own list is kept by hand: `kairos stats`, `kairos forecast` and `kairos audit` were answered
 * 'unknown command' by the real binary while their tests called the CLI's runCli directly.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_COMMANDS } from "../../src/cli/index.js";

const ROOT = join(import.meta.dirname, "..", "..");
const kairos = (...args: string[]) => {
  const r = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "src", "main.ts"), ...args], { cwd: ROOT, encoding: "utf8", env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", HOME: "/nonexistent" } });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

describe("kairos dispatches every CLI command", { timeout: 120_000 }, () => {
  it("lists each of CLI_COMMANDS among the commands it knows", () => {
    const r = kairos("no-such-command");
    expect(r.code).not.toBe(0);
    const known = /use one of: (.*)$/m.exec(r.err)?.[1]?.split(", ") ?? [];
    for (const c of CLI_COMMANDS) expect(known, c).toContain(c);
  });

  it("runs kairos stats, forecast and audit (their --help)", () => {
    for (const c of ["stats", "forecast", "audit"]) {
      const h = kairos(c, "--help");
      expect(h.err, c).not.toMatch(/unknown command/);
      expect(h.code, c).toBe(0);
      expect(h.out, c).toMatch(/Examples:/);
    }
  });
});
