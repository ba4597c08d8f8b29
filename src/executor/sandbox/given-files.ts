/**
 * A slot's directory of files Kairos gives its runs (a DAG task's inputs and params): made once
 * with the slot, the executor's, read-only to a sandboxed run (bound at /kairos). Before each run
 * (Sandbox.prepare, before anything of the run exists) its files are written in place and any
 * others blanked in place (one space left); they are never made and deleted, and never truncated
 * to nothing: on ext4, making and deleting two files per run, or
 * truncating them to zero bytes (which makes the next write wait for the journal, ext4's
 * auto_da_alloc), cost an executor running many slots at once up to a third of its time
 * (docs/decisions.md). Nothing here follows a link: an unsandboxed run (same user as the
 * executor) could have put one there.
 */
import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, openSync, readdirSync, writeSync } from "node:fs";
import { join } from "node:path";

/** No O_TRUNC: a file is checked (fstat) before anything of it changes. */
const OPEN = constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Opens `path` for writing if it is a plain file of the executor's with one name; throws otherwise
 * (the fd closed). Returns the fd and the file's size.
 */
function openOwn(path: string, create: boolean): { fd: number; size: number } {
  const fd = openSync(path, create ? OPEN | constants.O_CREAT : OPEN, 0o644);
  const st = fstatSync(fd);
  if (!st.isFile() || st.nlink !== 1 || st.uid !== process.getuid?.()) {
    closeSync(fd);
    throw new Error(`${path} is not a file of the executor's; the slot is reset`);
  }
  return { fd, size: st.size };
}

/**
 * Writes `text` over the open file of `size` bytes from its start and cuts it to its length (at
 * least one byte): written from offset 0, the file is as long as the text unless it was longer.
 */
function overwrite(fd: number, size: number, text: string): void {
  if (text.length === 0) text = BLANK;
  const length = Buffer.byteLength(text);
  let off = writeSync(fd, text, 0, "utf8");
  if (off < length) {
    const buf = Buffer.from(text);
    while (off < length) off += writeSync(fd, buf, off, length - off, off);
  }
  if (size > length) ftruncateSync(fd, length);
}

/** What a blanked file holds. */
const BLANK = " ";

/** Writes `text` to `name` in the slot's given directory (in place when the file is there). Throws on anything but a plain file of its own. */
export function writeGivenFile(dir: string, name: string, text: string): void {
  const { fd, size } = openOwn(join(dir, name), true);
  try {
    overwrite(fd, size, text);
  } finally {
    closeSync(fd);
  }
}

/**
 * Before a run: gives it exactly `files` (name to text) in the slot's given directory, every other
 * file there blanked in place (one space), so nothing of an earlier run's inputs or params is left
 * for it. The files are written over the earlier run's in place: blanking them after each run as
 * well cost two more opens, writes and truncations a run, and each truncation made the next write
 * allocate the file's blocks again. False when the directory is not as the executor left it (then
 * the slot is made again): not a directory of the executor's with mode 0755, or holding anything
 * but its plain files.
 */
export function giveFiles(dir: string, files: Readonly<Record<string, string>>): boolean {
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory() || (st.mode & 0o7777) !== 0o755 || st.uid !== process.getuid?.()) return false;
    const present = readdirSync(dir);
    for (const name of present) {
      const { fd, size } = openOwn(join(dir, name), false);
      try {
        overwrite(fd, size, Object.hasOwn(files, name) ? files[name]! : BLANK);
      } finally {
        closeSync(fd);
      }
    }
    for (const name of Object.keys(files)) if (!present.includes(name)) writeGivenFile(dir, name, files[name]!);
    return true;
  } catch {
    return false;
  }
}

/** Blanks every file of the slot's given directory in place (giveFiles with no files). */
export function emptyGivenFiles(dir: string): boolean {
  return giveFiles(dir, {});
}
