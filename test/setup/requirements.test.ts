/**
 * The suite checks the machine first (scripts/requirements.mjs, `npm test`'s pretest): on a PATH
 * that lacks some programs it names each one, what needs it, and one apt-get line that installs
 * them all, instead of tests failing one by one (EGRESS without iptables, ...).
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REQUIREMENTS } from "../../scripts/requirements.mjs";

const ROOT = new URL("../..", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "kairos-requirements-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Where `program` is on this machine's PATH. */
function which(program: string): string {
  for (const d of (process.env.PATH ?? "").split(delimiter)) {
    try {
      accessSync(join(d, program), constants.X_OK);
      return join(d, program);
    } catch {
      // not in this folder
    }
  }
  throw new Error(`${program} is not on this machine's PATH (the suite needs it)`);
}

/** A PATH of one folder holding node, sh (npm runs scripts with it) and `programs` only. */
let bins = 0;
function pathWith(programs: string[]): string {
  const bin = join(dir, `bin-${++bins}`);
  mkdirSync(bin);
  for (const p of ["node", "sh", ...programs]) symlinkSync(which(p), join(bin, p));
  return bin;
}

function check(path: string, args: string[] = [], chromium = "/usr/bin/chromium") {
  const r = spawnSync(process.execPath, ["scripts/requirements.mjs", ...args], {
    cwd: ROOT,
    env: { PATH: path, KAIROS_CHROMIUM: chromium },
    encoding: "utf8",
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const programs = REQUIREMENTS.flatMap((r) => (r.program ? [r.program] : []));

describe("the suite's system requirements", () => {
  it("names each missing program, what needs it, and one apt-get line for all of them", () => {
    const r = check(pathWith(programs.filter((p) => !["iptables", "ip", "setpriv", "nsenter"].includes(p))), [], join(dir, "no-chromium"));
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      [
        "The test suite needs programs this machine does not have:",
        "  setpriv   (util-linux): dropping a sandboxed run to its slot's user",
        "  nsenter   (util-linux): EGRESS runs joining their network namespace",
        "  ip        (iproute2): EGRESS network namespaces (test/security/egress.test.ts)",
        "  iptables  (iptables): EGRESS firewall rules (test/security/egress.test.ts)",
        "  chromium  (chromium): the console's browser tests (test/console; or set KAIROS_CHROMIUM to a Chromium)",
        "Install them with:",
        "  apt-get install -y util-linux iproute2 iptables chromium",
        "(docs/testing.md lists every requirement.)",
        "",
      ].join("\n"),
    );
  });

  it("--packages gives .ci/run the packages to install, one a line", () => {
    const r = check(pathWith(programs.filter((p) => p !== "redis-server" && p !== "cc")), ["--packages"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("redis-server\ngcc\n");
    expect(check(pathWith(programs), ["--packages"]).stdout).toBe("");
  });

  it("says nothing and succeeds when everything is there", () => {
    const r = check(pathWith(programs));
    expect(r).toEqual({ status: 0, stdout: "", stderr: "" });
  });

  it("npm test stops at it before type-checking or running anything", () => {
    const npmCli = join(realpathSync(which("npm")), "..", "npm-cli.js");
    const r = spawnSync(process.execPath, [npmCli, "test"], {
      cwd: ROOT,
      env: { PATH: pathWith(programs.filter((p) => p !== "iptables")), HOME: process.env.HOME, KAIROS_CHROMIUM: "/usr/bin/chromium" },
      encoding: "utf8",
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("  iptables  (iptables): EGRESS firewall rules (test/security/egress.test.ts)\nInstall it with:\n  apt-get install -y iptables\n");
    expect(r.stdout).not.toMatch(/tsc --noEmit|vitest run/);
  });
});
