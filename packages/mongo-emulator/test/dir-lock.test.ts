/**
 * One emulator per data directory (src/dir-lock.ts): a second one on it is refused naming the
 * process that holds it; the lock goes with a stop, and one left by a process that is gone (killed,
 * crashed) is taken over. Two `kairos dev` on one data dir each appended to the same journal and
 * compacted it under the other.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DataDirInUseError, LOCK_FILE, startEmulator, type RunningEmulator } from "../src/index.js";

const dirs: string[] = [];
const running: RunningEmulator[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.stop()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), "kairos-emu-lock-"));
  dirs.push(d);
  return d;
}

async function start(dir: string): Promise<RunningEmulator> {
  const em = await startEmulator({ dataDir: dir });
  running.push(em);
  return em;
}

describe("one emulator per data directory", () => {
  it("refuses a second one on the directory, naming the process that holds it; after a stop it starts", async () => {
    const dir = dataDir();
    const first = await start(dir);
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(`${process.pid}\n`);
    const second = await startEmulator({ dataDir: dir }).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(DataDirInUseError);
    expect((second as DataDirInUseError).pid).toBe(process.pid);
    expect((second as Error).message).toMatch(new RegExp(`^${dir} is in use by another emulator \\(process ${process.pid}, this one, named in .*${LOCK_FILE}\\): two on one data directory would overwrite each other's writes`));
    await first.stop();
    running.splice(running.indexOf(first), 1);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    await start(dir);
  });

  it("takes over a lock left by a process that is gone, and refuses one held by a live process", async () => {
    const dir = dataDir();
    const gone = spawnSync(process.execPath, ["-e", ""]).pid!;
    writeFileSync(join(dir, LOCK_FILE), `${gone}\n`);
    const em = await start(dir);
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(`${process.pid}\n`);
    await em.stop();
    running.splice(running.indexOf(em), 1);

    const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      writeFileSync(join(dir, LOCK_FILE), `${other.pid}\n`);
      await expect(startEmulator({ dataDir: dir })).rejects.toThrow(`is in use by another emulator (process ${other.pid}, named in`);
      // The refused start leaves the other's lock alone.
      expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(`${other.pid}\n`);
    } finally {
      other.kill("SIGKILL");
    }
  });

  it("gives the lock back when it cannot start on the directory (a damaged snapshot)", async () => {
    const dir = dataDir();
    writeFileSync(join(dir, "snapshot.bson"), Buffer.from("definitely not a snapshot"));
    await expect(startEmulator({ dataDir: dir })).rejects.toThrow(/damaged/);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });
});
