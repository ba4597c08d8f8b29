export * from "./enums.js";
export * from "./job.input.js";
export * from "./job.type.js";
export * from "./node.type.js";
export * from "./resources.type.js";
export * from "./run.type.js";
export * from "./scalars.js";
export * from "./user.type.js";
