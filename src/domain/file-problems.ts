/**
 * Why a file or folder could not be read or written, in words for a message: the system's error
 * code named (`ENOTDIR` is "a part of the path is a file"), not `Error: ENOTDIR … at async …`.
 */
export function fileProblem(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  const words: Record<string, string> = {
    ENOENT: "no such file or directory",
    ENOTDIR: "no such file or directory (a part of the path is a file)",
    EACCES: "permission denied",
    EPERM: "permission denied",
    ELOOP: "a symbolic link that leads back to itself",
    EISDIR: "a folder where a file was expected",
    ENAMETOOLONG: "the path is too long",
    EROFS: "the file system is read-only",
    ENOSPC: "no space left on the device",
    EDQUOT: "the disk quota is used up",
  };
  return (typeof code === "string" ? words[code] : undefined) ?? `it cannot be used (${e instanceof Error ? e.message : String(e)})`;
}
