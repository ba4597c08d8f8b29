/**
 * Every package that `npm ci` installs accepts the oldest Node the project says it runs on
 * (package.json `engines`, the README's requirement): otherwise `npm ci` prints an EBADENGINE
 * warning for it, and the package may use what that Node lacks. A new dependency (or a deep one
 * that moved on to a newer Node) fails here with its name and what it wants; pin a release that
 * supports ours (package.json `overrides`) or raise the requirement and say so in the docs.
 */
import { readFileSync } from "node:fs";
import semver from "semver";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url);
const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL("package-lock.json", root), "utf8")) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
};

describe("Node version", () => {
  const oldest = semver.minVersion(pkg.engines.node)!.version;

  it("this machine's Node meets package.json engines", () => {
    expect(semver.satisfies(process.version, pkg.engines.node), `${process.version} vs ${pkg.engines.node}`).toBe(true);
  });

  it(`every locked package accepts Node ${oldest} (no EBADENGINE on npm ci)`, () => {
    const refusing = Object.entries(lock.packages).flatMap(([path, p]) => {
      const wants = Array.isArray(p.engines) ? undefined : p.engines?.node;
      if (!path || !wants || semver.satisfies(oldest, wants)) return [];
      return [`${path.replace(/^.*node_modules\//, "")}@${p.version} wants node ${wants} (${path})`];
    });
    expect(refusing).toEqual([]);
  });
});
