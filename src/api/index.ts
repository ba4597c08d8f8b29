export * from "./settings.js";
export * from "./ops.js";
export * from "./server.js";
