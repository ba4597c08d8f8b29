/** A stream's bytes, read to its end unless they pass a bound. */
import type { Readable } from "node:stream";

/** All of `stream`'s bytes; null (and the stream destroyed) as soon as they pass `max`. */
export async function readBounded(stream: Readable, max: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    total += b.byteLength;
    if (total > max) {
      stream.destroy();
      return null;
    }
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}
