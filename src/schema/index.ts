/**
 * The GraphQL types (type-graphql): object types, inputs, scalars, and the enums registered from
 * domain/'s objects. resolvers/ builds the schema from them; `schema.graphql` is emitted from it.
 */
export * from "./alert.type.js";
export * from "./artifact.type.js";
export * from "./enums.js";
export * from "./job.input.js";
export * from "./job.type.js";
export * from "./job-kinds.type.js";
export * from "./log.type.js";
export * from "./node.type.js";
export * from "./resources.type.js";
export * from "./run.type.js";
export * from "./run.input.js";
export * from "./scalars.js";
export * from "./user.type.js";
export * from "./user.input.js";
export * from "./dag.input.js";
export * from "./dag.type.js";
export * from "./job-last-run.type.js";
export * from "./wait.type.js";
export * from "./audit.type.js";
export * from "./stats.type.js";
export * from "./forecast.type.js";
