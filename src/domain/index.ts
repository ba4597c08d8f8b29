/**
 * The domain: the shapes of the stored documents, the states and policies as `as const` objects,
 * the run lifecycle table, timer ids, fire keys and the domain errors. It imports nothing of the
 * product; every other folder may import it.
 */
export * from "./dag-documents.js";
export * from "./dags.js";
export * from "./display-text.js";
export * from "./decimal-text.js";
export * from "./file-problems.js";
export * from "./url-problems.js";
export * from "./alerts.js";
export * from "./artifacts.js";
export * from "./documents.js";
export * from "./errors.js";
export * from "./fire-keys.js";
export * from "./hash.js";
export * from "./job-kinds.js";
export * from "./lifecycle.js";
export * from "./policies.js";
export * from "./statuses.js";
export * from "./time.js";
export * from "./timers.js";
export * from "./logs.js";
export * from "./waiting.js";
export * from "./stale-holds.js";
export * from "./audit.js";
export * from "./subjects.js";
