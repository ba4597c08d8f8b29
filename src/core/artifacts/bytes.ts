/** Reading an uploaded object back: its bytes, at most a bound, and their sha256. */
import { createHash } from "node:crypto";
import { readBounded, type BlobStore } from "../../blobs/index.js";

/** The object's bytes, or null when it is missing; `tooLong` when it holds more than `max` bytes. */
export async function readBack(blobs: BlobStore, key: string, max: number): Promise<{ bytes: Buffer; sha256: string; tooLong: boolean } | null> {
  const body = await blobs.get(key);
  if (!body) return null;
  const bytes = await readBounded(body, max);
  if (!bytes) return { bytes: Buffer.alloc(0), sha256: "", tooLong: true };
  return { bytes, sha256: createHash("sha256").update(bytes).digest("hex"), tooLong: false };
}
