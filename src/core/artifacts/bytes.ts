/** Reading an uploaded object back: its bytes, at most a bound, and their sha256. */
import { createHash } from "node:crypto";
import type { BlobStore } from "../../blobs/index.js";

/** The object's bytes, or null when it is missing; `tooLong` when it holds more than `max` bytes. */
export async function readBack(blobs: BlobStore, key: string, max: number): Promise<{ bytes: Buffer; sha256: string; tooLong: boolean } | null> {
  const body = await blobs.get(key);
  if (!body) return null;
  const hash = createHash("sha256");
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    total += b.byteLength;
    if (total > max) {
      body.destroy();
      return { bytes: Buffer.alloc(0), sha256: "", tooLong: true };
    }
    hash.update(b);
    chunks.push(b);
  }
  return { bytes: Buffer.concat(chunks), sha256: hash.digest("hex"), tooLong: false };
}
