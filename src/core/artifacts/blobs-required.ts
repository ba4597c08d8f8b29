import type { BlobStore } from "../../blobs/index.js";
import { PreconditionError } from "../../domain/index.js";

/** The blob store, or the error every artifact operation gives where there is none. */
export function requireBlobs(blobs: BlobStore | null): BlobStore {
  if (!blobs) throw new PreconditionError("artifacts need blob storage, and this deployment has none: the administrator sets S3_BUCKET (and S3_ENDPOINT, credentials)");
  return blobs;
}
