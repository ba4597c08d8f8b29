/**
 * MongoDB (docs/design.md, "Data model"): the connection and its indexes, write batchers, cursors,
 * retention, and every query of the product, one folder per collection, as functions named for
 * what they do. Nothing else in src/ talks to MongoDB.
 */
export * from "./api-keys/keys.js";
export * from "./artifacts/records.js";
export * from "./artifacts/users.js";
export * from "./batch.js";
export * from "./dag-runs/definitions.js";
export * from "./dag-runs/runs.js";
export * from "./dags/edits.js";
export * from "./fires/ledger.js";
export * from "./fires/user-reads.js";
export * from "./fires/withdrawn-runs.js";
export * from "./idempotency/records.js";
export * from "./jobs/edits.js";
export * from "./jobs/last-run.js";
export * from "./jobs/lookup.js";
export * from "./jobs/overlap-locks.js";
export * from "./jobs/scheduling.js";
export * from "./jobs/user-reads.js";
export * from "./mongo.js";
export * from "./nodes/liveness.js";
export * from "./nodes/pools.js";
export * from "./nodes/reads.js";
export * from "./nodes/registry.js";
export * from "./pages.js";
export * from "./runs/allocations.js";
export * from "./runs/cancellation.js";
export * from "./runs/claims.js";
export * from "./runs/creation.js";
export * from "./runs/job-cleanup.js";
export * from "./runs/ledger.js";
export * from "./runs/lookup.js";
export * from "./runs/pools.js";
export * from "./runs/reaper.js";
export * from "./runs/rebuild.js";
export * from "./runs/scheduling.js";
export * from "./runs/staged.js";
export * from "./runs/transitions.js";
export * from "./runs/user-limit.js";
export * from "./runs/user-reads.js";
export * from "./users/accounts.js";
export * from "./users/http-signing.js";
export * from "./users/run-limits.js";
export * from "./users/run-slots.js";
export * from "./counts.js";
export * from "./logs/chunks.js";
export * from "./logs/indexes.js";
export * from "./logs/segments.js";
export * from "./runs/log-writers.js";
export * from "./retention.js";
export * from "./runs/waits.js";
export * from "./audit/entries.js";
