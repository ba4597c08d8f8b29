/**
 * One emulator per data directory. Two of them (two `kairos dev` started on one data dir, in two
 * terminals) each appended to the same journal and compacted it under the other: each saw only its
 * own writes, and the files ended as an interleaving of both. The first to start writes its pid to
 * `emulator.lock` (created exclusively); another start finds that process alive and is refused.
 * A lock left by a process that is gone (killed, crashed) is taken over.
 */
import { open, readFile, rm } from "node:fs/promises";
import { join } from "node:path";

export const LOCK_FILE = "emulator.lock";

/** The data directory is held by a running process. */
export class DataDirInUseError extends Error {
  override name = "DataDirInUseError";
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(
      `${dir} is in use by another emulator (process ${pid}${pid === process.pid ? ", this one" : ""}, named in ${join(dir, LOCK_FILE)}): ` +
        `two on one data directory would overwrite each other's writes; stop it, or use another data directory ` +
        `(if process ${pid} is no emulator, remove ${join(dir, LOCK_FILE)})`,
    );
  }
}

/** Whether `pid` is a running process (a zombie, killed and not yet reaped, is not). */
async function alive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  return !(stat && / Z /.test(stat.slice(stat.lastIndexOf(")") + 1, stat.lastIndexOf(")") + 4)));
}

/** Takes `dir`'s lock for this process; the function returned gives it back. */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  const path = join(dir, LOCK_FILE);
  const mine = `${process.pid}\n`;
  for (let attempt = 0; ; attempt++) {
    try {
      const fh = await open(path, "wx", 0o600);
      try {
        await fh.writeFile(mine);
      } finally {
        await fh.close();
      }
      return async () => {
        // Only if it is still ours (a lock taken over after this one was judged gone is not).
        if ((await readFile(path, "utf8").catch(() => null)) === mine) await rm(path, { force: true });
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) throw e;
      const held = Number((await readFile(path, "utf8").catch(() => "")).trim());
      if (Number.isSafeInteger(held) && held > 0 && (await alive(held))) throw new DataDirInUseError(dir, held);
      await rm(path, { force: true });
    }
  }
}
