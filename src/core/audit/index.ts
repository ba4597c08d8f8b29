/** The audit trail of the API's mutations: recording (hash-chained, keyed; intents before the call), reading, verification, retention (docs/audit.md). */
export * from "./canonical.js";
export * from "./keys.js";
export * from "./payloads.js";
export * from "./service.js";
export * from "./verify.js";
export * from "./writer.js";
