/**
 * What `kairos apply -f` and `kairos run -f` read (src/cli/documents.ts), given paths a stranger
 * gives: a folder with a symbolic link back up into itself, /dev/zero, a link to itself, a path
 * that is not there. A folder with `up -> ..` was walked forty links deep and ended in "no such file
 * or directory" of that path; `-f /dev/zero` read until the machine ran out of memory.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listFiles, loadDocuments, MAX_FILE_BYTES } from "../../src/cli/documents.js";

let dir = "";
const JOB = "name: looped\nschedule: {kind: INTERVAL, every: PT1H}\nspec: {command: 'true'}\n";

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kairos-apply-files-"));
  await mkdir(join(dir, "jobs", "sub"), { recursive: true });
  await writeFile(join(dir, "jobs", "job.yaml"), JOB);
  await symlink("..", join(dir, "jobs", "sub", "up"));
  await symlink("self", join(dir, "self"));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("kairos apply -f: the paths it is given", () => {
  it("reads a folder with a link back up into itself once", async () => {
    const files = await listFiles([join(dir, "jobs")]);
    expect(files).toEqual([join(dir, "jobs", "job.yaml")]);
    const docs = await loadDocuments(files);
    expect(docs.map((d) => d.name)).toEqual(["looped"]);
  });

  it("says why a path cannot be read", async () => {
    await expect(listFiles([join(dir, "nowhere.yaml")])).rejects.toThrow(`${join(dir, "nowhere.yaml")}: no such file or directory`);
    await expect(listFiles([join(dir, "self")])).rejects.toThrow(`${join(dir, "self")}: a symbolic link that leads back to itself`);
    await expect(listFiles([join(dir, "jobs", "job.yaml", "x")])).rejects.toThrow("no such file or directory (a part of the path is a file)");
  });

  it("stops reading a file past 16 MiB (/dev/zero has no end), saying so", async () => {
    expect(MAX_FILE_BYTES).toBe(16 * 1024 * 1024);
    await expect(loadDocuments(["/dev/zero"])).rejects.toThrow("/dev/zero: is larger than 16 MiB, more than any job file");
  });
});
