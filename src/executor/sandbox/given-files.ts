/**
 * A slot's directory of files Kairos gives its runs (a DAG task's inputs and params): made once
 * with the slot, the executor's, read-only to a sandboxed run (bound at /kairos). The files are
 * written in place for each run and emptied in place after it, never made and deleted: making and
 * deleting two files per run was, with many slots at once on a journalled disk, a fifth of an
 * executor's CPU (docs/decisions.md). Nothing here follows a link: an unsandboxed run (same user
 * as the executor) could have put one there.
 */
import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, openSync, readdirSync, writeSync } from "node:fs";
import { join } from "node:path";

/** No O_TRUNC: a file is checked (fstat) before anything of it changes. */
const OPEN = constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Opens `path` for writing if it is a plain file of the executor's with one name; throws otherwise (the fd closed). */
function openOwn(path: string, create: boolean): number {
  const fd = openSync(path, create ? OPEN | constants.O_CREAT : OPEN, 0o644);
  const st = fstatSync(fd);
  if (!st.isFile() || st.nlink !== 1 || st.uid !== process.getuid?.()) {
    closeSync(fd);
    throw new Error(`${path} is not a file of the executor's; the slot is reset`);
  }
  return fd;
}

/** Writes `text` to `name` in the slot's given directory (in place when the file is there). Throws on anything but a plain file of its own. */
export function writeGivenFile(dir: string, name: string, text: string): void {
  const fd = openOwn(join(dir, name), true);
  try {
    ftruncateSync(fd, 0);
    const buf = Buffer.from(text);
    for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
  } finally {
    closeSync(fd);
  }
}

/**
 * After a run: empties every file of the slot's given directory in place. False when the directory
 * is not as the executor left it (then the slot is made again): not a directory of the executor's
 * with mode 0755, or holding anything but its plain files.
 */
export function emptyGivenFiles(dir: string): boolean {
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory() || (st.mode & 0o7777) !== 0o755 || st.uid !== process.getuid?.()) return false;
    for (const name of readdirSync(dir)) {
      const fd = openOwn(join(dir, name), false);
      try {
        if (fstatSync(fd).size > 0) ftruncateSync(fd, 0);
      } finally {
        closeSync(fd);
      }
    }
    return true;
  } catch {
    return false;
  }
}
