/**
 * The executor role (docs/design.md, "Dispatch" and "Leases and fencing"): `Executor` registers its
 * node, pulls runs of its pools while it has free slots, starts them in a sandbox kept per slot,
 * confirms their claims, renews their leases in one write per node, ships their output and reports
 * their results. Also the artifact cache and the egress defaults, which app/ and config/ use.
 */
export * from "./executor.js";
export * from "./sandbox/egress.js";
export * from "./artifact-cache.js";
