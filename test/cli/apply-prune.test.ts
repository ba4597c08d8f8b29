/**
 * `kairos apply --prune` given files that hold no job or DAG at all (an empty folder, a folder of
 * *.txt, a mistyped path to one): it planned, and did, the deletion of every job and DAG of the
 * caller's. It is refused saying so and what it would have deleted, unless --allow-empty says it is
 * meant. In-process (runCli) against the product.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runKairos, type InProcessRun } from "./in-process.js";
import { makeJob, makeUser } from "../helpers/accounts.js";
import { useTestApp } from "../helpers/app.js";

const t = useTestApp();
let dir = "";
let token = "";

const kairos = (...argv: string[]): Promise<InProcessRun> => runKairos(argv, { env: { KAIROS_SERVER: t.app.url, KAIROS_TOKEN: token } });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kairos-prune-"));
  await mkdir(join(dir, "empty"));
  await mkdir(join(dir, "notes"));
  await writeFile(join(dir, "notes", "jobs.txt"), "name: not-read\n");
  const user = await makeUser(t.app, t.admin, "pruner");
  token = user.token;
  await makeJob(t.app, token, "keep-me-1");
  await makeJob(t.app, token, "keep-me-2");
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("kairos apply --prune of files with nothing in them", () => {
  it("is refused, dry run or not, naming what it would delete; nothing is deleted", async () => {
    for (const [path, extra] of [[join(dir, "empty"), []], [join(dir, "notes"), ["--dry-run"]]] as const) {
      const r = await kairos("apply", "-f", path, "--prune", ...extra);
      expect(r.code, path).toBe(2);
      expect(r.err).toBe(
        `kairos: ${path} holds no job or DAG (a wrong path? only *.yaml, *.yml and *.json files of a folder are read): with --prune that would delete every job and DAG of yours (2). Nothing was changed; add --allow-empty if that is what you mean\n`,
      );
    }
    const left = await kairos("get", "jobs", "-o", "json");
    expect((JSON.parse(left.out) as Array<{ name: string }>).map((j) => j.name).sort()).toEqual(["keep-me-1", "keep-me-2"]);
  });

  it("goes on with --allow-empty; without --prune an empty folder changes nothing, as before", async () => {
    const plan = await kairos("apply", "-f", join(dir, "empty"), "--prune", "--allow-empty", "--dry-run");
    expect(plan.code).toBe(0);
    expect(plan.out).toContain("0 to create, 0 to update, 2 to delete, 0 unchanged");
    const none = await kairos("apply", "-f", join(dir, "empty"));
    expect(none.code).toBe(0);
    expect(none.out).toContain("no changes");
  });
});
