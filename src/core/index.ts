/**
 * The services, by capability (docs/architecture.md, layer 5): runs (`runs/`: materialising a fire,
 * claims, transitions, attempts, retries, cancellation, overlap locks, per-user slots, staging, the
 * bound on waiting runs), jobs (`jobs/`), users, idempotency, events, resources and allocations,
 * pools, nodes, the fire ledger, artifacts (`artifacts/`) and run logs (`logs/`). A service acting
 * for a user takes the principal; MongoDB is reached through store/, Redis through shared-state/.
 */
export * from "./alerts/index.js";
export * from "./allocations.js";
export * from "./artifacts/index.js";
export * from "./events.js";
export * from "./fires.js";
export * from "./http-signing.js";
export * from "./job-kinds.js";
export * from "./jobs/index.js";
export * from "./lookups.js";
export * from "./nodes.js";
export * from "./pools.js";
export * from "./resources.js";
export * from "./run-reads.js";
export * from "./runs/index.js";
export * from "./ssrf.js";
export * from "./users.js";
export { validateSpec, wrapSchedule, type PoolNode } from "./spec.js";
export { IdempotencyService, jsonFingerprint, type IdempotencyOptions } from "./idempotency.js";
export * from "./logs/index.js";
export * from "./waits/index.js";
export * from "./cluster-stats.js";
export * from "./cluster-stats-feed.js";
export * from "./forecast.js";
export * from "./audit/index.js";
