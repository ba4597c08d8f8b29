export * from "./checks.js";
export * from "./memory/index.js";
export * from "./ports.js";
export * from "./redis/index.js";
