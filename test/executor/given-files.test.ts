/** A slot's given directory (src/executor/sandbox/given-files.ts): files written and emptied in place, never through a link. */
import { chmodSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { emptyGivenFiles, writeGivenFile } from "../../src/executor/sandbox/given-files.js";

let base: string;
let dir: string;
beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "kairos-given-"));
  dir = join(base, "given");
  mkdirSync(dir, { mode: 0o755 });
  chmodSync(dir, 0o755);
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("given files", () => {
  it("writes a file in place (same inode every time) and blanks it in place after the run", () => {
    writeGivenFile(dir, "inputs.json", `{"a":1,"long":"${"x".repeat(100)}"}`);
    const ino = statSync(join(dir, "inputs.json")).ino;
    writeGivenFile(dir, "inputs.json", `{"b":2}`);
    expect(readFileSync(join(dir, "inputs.json"), "utf8")).toBe(`{"b":2}`);
    expect(statSync(join(dir, "inputs.json")).ino).toBe(ino);
    expect((statSync(join(dir, "inputs.json")).mode & 0o777).toString(8)).toBe("644");
    expect(emptyGivenFiles(dir)).toBe(true);
    expect(readFileSync(join(dir, "inputs.json"), "utf8")).toBe(" ");
    expect(statSync(join(dir, "inputs.json")).ino).toBe(ino);
    writeGivenFile(dir, "inputs.json", `[1]`);
    expect(readFileSync(join(dir, "inputs.json"), "utf8")).toBe(`[1]`);
  });

  it("never writes through a link a run left: a symbolic link or a hard link to another file", () => {
    const outside = join(base, "outside.txt");
    writeFileSync(outside, "precious");
    symlinkSync(outside, join(dir, "inputs.json"));
    expect(() => writeGivenFile(dir, "inputs.json", "{}")).toThrow();
    expect(emptyGivenFiles(dir)).toBe(false); // the slot is made again
    expect(readFileSync(outside, "utf8")).toBe("precious");

    const dir2 = join(base, "given2");
    mkdirSync(dir2, { mode: 0o755 });
    chmodSync(dir2, 0o755);
    linkSync(outside, join(dir2, "params.json"));
    expect(() => writeGivenFile(dir2, "params.json", "{}")).toThrow(/not a file of the executor's/);
    expect(emptyGivenFiles(dir2)).toBe(false);
    // Checked before anything changed: the linked file keeps its bytes.
    expect(readFileSync(outside, "utf8")).toBe("precious");
  });

  it("asks for a new slot when the directory is not as the executor left it", () => {
    mkdirSync(join(dir, "sub"));
    expect(emptyGivenFiles(dir)).toBe(false);
    const loose = join(base, "loose");
    mkdirSync(loose, { mode: 0o777 });
    chmodSync(loose, 0o777);
    expect(emptyGivenFiles(loose)).toBe(false);
    expect(emptyGivenFiles(join(base, "missing"))).toBe(false);
    expect(lstatSync(dir).isDirectory()).toBe(true);
  });
});

describe("a DAG task's result file", () => {
  it("is read once and removed, so a task that wrote only its result leaves its work directory empty for the next run", async () => {
    const { readDagResult } = await import("../../src/executor/dag-files.js");
    const work = join(base, "work");
    mkdirSync(work);
    writeFileSync(join(work, ".kairos-result.json"), `{"rows": 3}`);
    expect(readDagResult(work)).toEqual({ json: `{"rows":3}` });
    expect(readdirSync(work)).toEqual([]);
    expect(readDagResult(work)).toEqual({ json: null });
  });
});
