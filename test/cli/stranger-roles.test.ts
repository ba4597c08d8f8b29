/**
 * `kairos dev --help` is what a stranger types first; it answered "kairos: unknown option --help;
 * allowed: --port, …" and failed. Run from the source (tsx), so no build is needed: the help is
 * printed before any role's code loads, and nothing is started.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROLE_FLAGS } from "../../src/config/index.js";

const ROOT = join(import.meta.dirname, "..", "..");

const kairos = (...args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "src", "main.ts"), ...args], { cwd: ROOT, encoding: "utf8", timeout: 120_000, env: { ...process.env, KAIROS_PORT: "1" } });

describe("a server role's --help", { timeout: 240_000 }, () => {
  it.each([["dev", "--help"], ["scheduler", "-h"]])("kairos %s %s prints the role's usage and its options, and starts nothing", (role, flag) => {
    const r = kairos(role!, flag!);
    expect(r.stderr).not.toContain("unknown option");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`Usage: kairos ${role} [options]`);
    expect(r.stdout).toMatch(new RegExp(`^  ${role} `, "m"));
    expect(r.stdout).toContain("--port N");
    expect(r.stdout).toContain("docs/configuration.md");
  });

  it("the help lists every option the roles accept (--log-format and --metrics-port were accepted but missing)", () => {
    expect(ROLE_FLAGS).toEqual(expect.arrayContaining(["--port", "--log-format", "--metrics-port"]));
    const role = kairos("dev", "--help").stdout;
    const top = kairos("--help").stdout;
    for (const flag of ROLE_FLAGS) {
      expect(role, `kairos dev --help lists ${flag}`).toMatch(new RegExp(`(^|\\s)${flag} \\S`, "m"));
      expect(top, `kairos --help lists ${flag}`).toMatch(new RegExp(`(^|\\s)${flag} \\S`, "m"));
    }
  });

  it("an unknown option is still refused, naming those allowed", () => {
    const r = kairos("dev", "--bogus");
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("unknown option --bogus; allowed: --port");
  });
});
