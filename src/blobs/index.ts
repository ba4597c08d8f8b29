/** Blob storage (S3 and S3-compatible): artifacts and archived logs. */
export type { BlobHead, BlobListing, BlobPutOptions, BlobStore, BlobStoreSettings, PresignGetOptions, PresignPutOptions, PresignedPut } from "./ports.js";
export { createS3BlobStore, MAX_STREAMED_PUT_BYTES } from "./s3.js";
export { readBounded } from "./read-bounded.js";
