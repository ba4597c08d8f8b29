/** The blob store as logs use it: whole small objects (a log is capped), and download links. */
import type { BlobStore } from "../../blobs/index.js";
import type { LogBlobs } from "./types.js";

export function logBlobs(store: BlobStore): LogBlobs {
  return {
    put: (key, body, meta) => store.put(key, body, meta),
    async get(key) {
      const stream = await store.get(key);
      if (!stream) return null;
      const parts: Buffer[] = [];
      for await (const part of stream) parts.push(Buffer.isBuffer(part) ? part : Buffer.from(part as Uint8Array));
      return Buffer.concat(parts);
    },
    delete: (key) => store.delete(key),
    presignGet: (key, ttlSeconds, filename) => store.presignGet(key, { expiresInSeconds: ttlSeconds, fileName: filename, contentType: "application/gzip" }),
  };
}
