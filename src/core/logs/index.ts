/**
 * Run logs (docs/logs.md): the writer that stores executors' output chunks fenced by their claim,
 * reads by offset and the live follower the API streams from, the archiver that moves an ended log
 * to S3 as one gzip file, and the log settings.
 */
export * from "./archive-format.js";
export * from "./archiver.js";
export * from "./follow.js";
export * from "./reads.js";
export * from "./settings.js";
export * from "./types.js";
export * from "./writer.js";
export * from "./service.js";
export * from "./blobs.js";
