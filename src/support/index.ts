export * from "./log.js";
export * from "./metrics.js";
export * from "./wakeup.js";
export * from "./periodic.js";
