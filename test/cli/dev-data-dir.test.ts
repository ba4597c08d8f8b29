/**
 * Two `kairos dev` on one data directory (`npm start` in two terminals, ./.kairos both): the second
 * started, its emulator appending to the first one's journal, and marked the first one's executor
 * DEAD for silence. It is now refused with one line naming the process that holds the directory and
 * what to do; once the first has stopped, a start there works. A data dir that is a file is refused
 * the same way. From the sources (tsx), as taken-port.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let dir = "";
const children: ChildProcess[] = [];

/** `kairos dev` on `dataDir` and a free port; `banner` resolves once it says it is running. */
function dev(dataDir: string): { child: ChildProcess; banner: Promise<void>; exited: Promise<number | null>; err: () => string } {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "dev", "--port", "0", "--data-dir", dataDir], {
    env: { ...process.env, KAIROS_LOG_LEVEL: "warn", KAIROS_ADMIN_PASSWORD: "dev-data-dir-pw", AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(child);
  let err = "";
  const banner = new Promise<void>((resolve, reject) => {
    child.stderr!.on("data", (d) => {
      err += d;
      if (err.includes("Kairos dev is running")) resolve();
    });
    child.on("close", () => reject(new Error(`kairos dev ended before its banner:\n${err}`)));
  });
  banner.catch(() => undefined);
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  return { child, banner, exited, err: () => err };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kairos-dev-dir-"));
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await rm(dir, { recursive: true, force: true });
});

describe("kairos dev: one per data directory", { timeout: 240_000 }, () => {
  it("refuses a --data-dir that is a file with one line (it printed EEXIST and a stack)", async () => {
    const file = join(dir, "a-file");
    await writeFile(file, "");
    const p = dev(file);
    expect(await p.exited).toBe(2);
    expect(p.err()).toBe(`kairos: KAIROS_DATA_DIR (--data-dir) ${file}: a file is there, not a folder; give a folder kairos dev may write (it is made if missing)\n`);
  });

  it("refuses a second one on the data dir with one line; after the first stops, one starts there", async () => {
    const data = join(dir, "data");
    const first = dev(data);
    await first.banner;

    const second = dev(data);
    expect(await second.exited).toBe(2);
    expect(second.err()).toBe(
      `kairos: KAIROS_DATA_DIR (--data-dir) ${data} is in use by another kairos dev (process ${first.child.pid}): two on one data directory would overwrite each other's data. ` +
        `Stop it (Ctrl-C where it runs), or start this one with another --data-dir; if process ${first.child.pid} is no kairos, remove ${join(data, "mongo", "emulator.lock")}\n`,
    );

    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    const third = dev(data);
    await third.banner;
    third.child.kill("SIGTERM");
    expect(await third.exited).toBe(0);
  });
});
