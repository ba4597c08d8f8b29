export * from "./archive-format.js";
export * from "./archiver.js";
export * from "./follow.js";
export * from "./reads.js";
export * from "./settings.js";
export * from "./types.js";
export * from "./writer.js";
export * from "./service.js";
