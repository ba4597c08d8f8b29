#!/usr/bin/env node
/**
 * What the test suite needs on the machine besides Node.js and `npm ci`: the one list, used by
 * `npm test` (its `pretest` step runs this script), the suite's global setup (test/setup/global.ts,
 * which warns for a run of some files) and .ci/run (which installs what is absent). docs/testing.md
 * lists the same, for people.
 *
 *   node scripts/requirements.mjs             prints what is missing with one apt-get line; exit 1
 *   node scripts/requirements.mjs --packages  prints the Debian packages to install, one a line
 *
 * Programs are looked up on PATH (as a shell does); Chromium at KAIROS_CHROMIUM or /usr/bin/chromium
 * (test/console/browser.ts). Plain Node: it runs before `npm ci` in .ci/run.
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Each requirement: a program on PATH (or a file), its Debian package, and what needs it. */
export const REQUIREMENTS = [
  { program: "redis-server", pkg: "redis-server", neededBy: "the suite's private Redis (test/setup/global.ts)" },
  { program: "bwrap", pkg: "bubblewrap", neededBy: "the executor's sandbox (test/security, test/executor)" },
  { program: "setpriv", pkg: "util-linux", neededBy: "dropping a sandboxed run to its slot's user" },
  { program: "nsenter", pkg: "util-linux", neededBy: "EGRESS runs joining their network namespace" },
  { program: "ip", pkg: "iproute2", neededBy: "EGRESS network namespaces (test/security/egress.test.ts)" },
  { program: "iptables", pkg: "iptables", neededBy: "EGRESS firewall rules (test/security/egress.test.ts)" },
  { program: "cc", pkg: "gcc", neededBy: "the executor's launcher, built from src/executor/sandbox/launcher.c" },
  { program: "python3", pkg: "python3", neededBy: "python3 SCRIPT jobs (test/api/job-kinds-programs.test.ts, test/executor)" },
  { file: "chromium", pkg: "chromium", neededBy: "the console's browser tests (test/console; or set KAIROS_CHROMIUM to a Chromium)" },
];

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function onPath(program, env) {
  return (env.PATH ?? "").split(delimiter).some((dir) => dir && executable(join(dir, program)));
}

/** The requirements this machine lacks (in `env`: PATH, KAIROS_CHROMIUM). */
export function missingRequirements(env = process.env) {
  return REQUIREMENTS.filter((r) => (r.program ? !onPath(r.program, env) : !executable(env.KAIROS_CHROMIUM ?? "/usr/bin/chromium")));
}

/** The Debian packages that bring what is missing, each once, in the list's order. */
export function packagesFor(missing) {
  return [...new Set(missing.map((r) => r.pkg))];
}

/** For people: what is missing, what needs it, and the one command that installs all of it. */
export function describeMissing(missing) {
  const width = Math.max(...missing.map((r) => (r.program ?? r.file).length));
  const lines = missing.map((r) => `  ${(r.program ?? r.file).padEnd(width)}  (${r.pkg}): ${r.neededBy}`);
  return [
    `The test suite needs ${missing.length === 1 ? "a program" : "programs"} this machine does not have:`,
    ...lines,
    `Install ${missing.length === 1 ? "it" : "them"} with:`,
    `  apt-get install -y ${packagesFor(missing).join(" ")}`,
    `(docs/testing.md lists every requirement.)`,
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const missing = missingRequirements();
  if (process.argv.includes("--packages")) {
    for (const p of packagesFor(missing)) process.stdout.write(`${p}\n`);
  } else if (missing.length > 0) {
    process.stderr.write(`${describeMissing(missing)}\n`);
    process.exit(1);
  }
}
