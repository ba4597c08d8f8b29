export * from "./executor.js";
export * from "./sandbox/egress.js";
export * from "./artifact-cache.js";
