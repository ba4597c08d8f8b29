/** The GraphQL resolvers: the executable schema, the per-request context, the error translation. */
export * from "./build-schema.js";
export * from "./context.js";
export * from "./errors.js";
export * from "./pagination.js";
export * from "./int-ranges.js";
