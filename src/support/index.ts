export * from "./log.js";
export * from "./metrics.js";
export * from "./wakeup.js";
