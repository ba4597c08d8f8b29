export * from "./executor.js";
export * from "./sandbox/egress.js";
