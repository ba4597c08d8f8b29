/**
 * `npm start` builds only what changed (scripts/build.mjs): the decision (scripts/stale.mjs) and
 * the inputs each TypeScript step declares, checked against what tsc really compiles, so a file
 * a project reads that no input covers (a new import outside them) cannot be built stale.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TSC_STEPS } from "../../scripts/build-steps.mjs";
import { markBuilt, markFailed, root, staleReason } from "../../scripts/stale.mjs";

const dir = mkdtempSync(join(tmpdir(), "kairos-stale-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, mtimeSeconds: number): string {
  const path = join(dir, name);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, name);
  utimesSync(path, mtimeSeconds, mtimeSeconds);
  return path;
}

describe("the build's staleness decision", () => {
  it("builds a missing output, skips a current one, and builds again after an input changes", () => {
    const output = join(dir, "out/stamp");
    const src = join(dir, "src");
    file("src/a.ts", 1000);
    file("src/deep/b.ts", 1000);
    const step = { output, inputs: [src] };
    expect(staleReason(step)).toBe(`${relative(root, output)} is missing`);

    file("out/stamp", 0);
    markBuilt(output, 2000_000);
    expect(staleReason(step)).toBeNull();

    // Saved after the build started (even while it ran): stale, and the reason names the file.
    file("src/deep/b.ts", 2001);
    expect(staleReason(step)).toBe(`${relative(root, join(src, "deep/b.ts"))} changed`);
    expect(staleReason({ ...step, exclude: [join(src, "deep")] })).toBeNull();
  });

  it("a failed build is stale, so its errors are reported again", () => {
    const output = file("failed/stamp", 3000);
    file("failed-src/x.ts", 1000);
    const step = { output, inputs: [join(dir, "failed-src")] };
    expect(staleReason(step)).toBeNull();
    markFailed(output);
    expect(staleReason(step)).toBe(`${relative(root, join(dir, "failed-src/x.ts"))} changed`);
  });

  it("an output that must exist beside the stamp makes it stale when it is gone", () => {
    const output = file("also/stamp", 3000);
    expect(staleReason({ output, inputs: [], also: [join(dir, "also/main.js")] })).toBe(`${relative(root, join(dir, "also/main.js"))} is missing`);
  });
});

describe("each TypeScript step's inputs", () => {
  const tsc = join(root, "node_modules/typescript/bin/tsc");
  // tsc reads and parses the whole project (a few seconds of CPU on a quiet host; over 30 s was seen
  // with the suite on three workers beside other work): a longer bound than the suite's default.
  for (const step of TSC_STEPS) {
    it(`cover every file ${step.name} compiles (${step.project})`, () => {
      const listed = execFileSync(process.execPath, [tsc, "-p", step.project, "--listFilesOnly"], { cwd: root, encoding: "utf8" });
      const files = listed
        .split("\n")
        .filter(Boolean)
        .map((f) => relative(root, f))
        .filter((f) => !f.startsWith(`node_modules${sep}`) && !f.includes(`${sep}node_modules${sep}`));
      expect(files.length).toBeGreaterThan(0);
      const covered = (f: string) => step.inputs.some((i) => f === i || f.startsWith(`${i}${sep}`)) && !(step.exclude ?? []).some((x) => f === x || f.startsWith(`${x}${sep}`));
      expect(files.filter((f) => !covered(f))).toEqual([]);
    }, 180_000);
  }
});
