/**
 * Process plumbing every role uses: the logger (pino), the Prometheus metrics (prom-client),
 * `Wakeup`, the helper for background passes (`periodic.ts`), and binding a server to its port.
 */
export * from "./log.js";
export * from "./metrics.js";
export * from "./wakeup.js";
export * from "./periodic.js";
export * from "./listen.js";
