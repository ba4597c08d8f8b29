/** A slot's given directory (src/executor/sandbox/given-files.ts): files written and emptied in place, never through a link. */
import { chmodSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { emptyGivenFiles, giveFiles, writeGivenFile } from "../../src/executor/sandbox/given-files.js";
import { Sandbox } from "../../src/executor/sandbox/sandbox.js";
import { DEFAULT_RESOURCES } from "../../src/core/resources.js";
import type { JobSpec } from "../../src/domain/documents.js";
import { silentLogger } from "../../src/support/log.js";

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

describe("the files a run is given (written before it, not blanked after the one before)", () => {
  it("writes the run's files in place over the last run's, blanks the others, and makes the missing ones", () => {
    writeGivenFile(dir, "inputs.json", `{"secret":"${"s".repeat(200)}"}`);
    writeGivenFile(dir, "params.json", `{"token":"t0"}`);
    const ino = statSync(join(dir, "inputs.json")).ino;
    // A run given only its params: the last run's inputs are gone (blanked), its params replaced.
    expect(giveFiles(dir, { "params.json": `{"p":2}` })).toBe(true);
    expect(readFileSync(join(dir, "inputs.json"), "utf8")).toBe(" ");
    expect(readFileSync(join(dir, "params.json"), "utf8")).toBe(`{"p":2}`);
    expect(statSync(join(dir, "inputs.json")).ino).toBe(ino);
    // A run given nothing: every file blank; a shorter text leaves nothing of a longer one.
    expect(giveFiles(dir, {})).toBe(true);
    expect(readdirSync(dir).sort().map((n) => readFileSync(join(dir, n), "utf8"))).toEqual([" ", " "]);
    expect(giveFiles(dir, { "inputs.json": `{"aaaaaaaaaa":1}`, "new.json": "" })).toBe(true);
    expect(giveFiles(dir, { "inputs.json": `[1]` })).toBe(true);
    expect(readFileSync(join(dir, "inputs.json"), "utf8")).toBe(`[1]`);
    expect(readFileSync(join(dir, "new.json"), "utf8")).toBe(" ");
  });

  it("writes through no link and over no file of another's, and asks for a new slot instead", () => {
    const outside = join(base, "outside.txt");
    writeFileSync(outside, "precious");
    writeGivenFile(dir, "inputs.json", "{}");
    symlinkSync(outside, join(dir, "params.json"));
    expect(giveFiles(dir, { "inputs.json": "[1]", "params.json": "{}" })).toBe(false);
    expect(giveFiles(dir, {})).toBe(false);
    expect(readFileSync(outside, "utf8")).toBe("precious");
    const dir2 = join(base, "given2");
    mkdirSync(dir2, { mode: 0o755 });
    chmodSync(dir2, 0o755);
    linkSync(outside, join(dir2, "inputs.json"));
    expect(giveFiles(dir2, { "inputs.json": "{}" })).toBe(false);
    expect(readFileSync(outside, "utf8")).toBe("precious");
  });

  it("leave nothing of a slot's last run for its next one, of any kind, and a tampered directory is made again", async () => {
    const log = silentLogger();
    const sandbox = Sandbox.open({ mode: "none", workRoot: join(base, "work"), slots: 1, uidBase: 61_500, roPaths: [], nodeTag: "given", log });
    try {
      const spec: JobSpec = { kind: "COMMAND", command: null, argv: ["true"], env: {}, timeoutMs: 60_000, pool: "default", resources: DEFAULT_RESOURCES };
      const a = sandbox.prepare(0, "a", spec, {}, DEFAULT_RESOURCES, { "inputs.json": `{"secret":"victim"}`, "params.json": `{"token":"victim"}` });
      const given = a.given.host;
      expect(readFileSync(join(given, "params.json"), "utf8")).toBe(`{"token":"victim"}`);
      a.cgroup?.remove();
      await sandbox.releaseSlot(0);
      // The next run, not a DAG task: every file blank before it exists.
      const b = sandbox.prepare(0, "b", spec, {}, DEFAULT_RESOURCES);
      expect(readdirSync(given).sort().map((n) => readFileSync(join(given, n), "utf8"))).toEqual([" ", " "]);
      b.cgroup?.remove();
      await sandbox.releaseSlot(0);
      // A run (unsandboxed, the executor's user) left a link where a file was: the slot is made again, the link's target untouched.
      const outside = join(base, "outside.txt");
      writeFileSync(outside, "precious");
      await rm(join(given, "inputs.json"));
      symlinkSync(outside, join(given, "inputs.json"));
      const c = sandbox.prepare(0, "c", spec, {}, DEFAULT_RESOURCES, { "inputs.json": `{"c":1}` });
      expect(lstatSync(join(given, "inputs.json")).isFile()).toBe(true);
      expect(readFileSync(join(given, "inputs.json"), "utf8")).toBe(`{"c":1}`);
      expect(readdirSync(given)).toEqual(["inputs.json"]);
      expect(readFileSync(outside, "utf8")).toBe("precious");
      c.cgroup?.remove();
      await sandbox.releaseSlot(0);
      // A run that left files in its work directory but none in /tmp (a DAG task's outputs): the
      // quick reset of /tmp and the whole remake of the slot must not race (they did: EEXIST, and
      // the slot was left without its given directory).
      for (let i = 0; i < 20; i++) {
        const r = sandbox.prepare(0, `r${i}`, spec, {}, DEFAULT_RESOURCES, { "inputs.json": `{"i":${i}}` });
        const work = r.process.cwd!;
        writeFileSync(join(work, "out.txt"), "left behind");
        r.cgroup?.remove();
        await sandbox.releaseSlot(0);
        expect(readdirSync(work)).toEqual([]);
        expect(readdirSync(join(work, "..", "tmp"))).toEqual([]);
        expect(statSync(given).isDirectory()).toBe(true);
      }
    } finally {
      await sandbox.close();
    }
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
