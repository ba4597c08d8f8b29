/**
 * Process plumbing every role uses: the logger (pino), the Prometheus metrics (prom-client),
 * `Wakeup`, the helper for background passes (`periodic.ts`), binding a server to its port, and
 * tracing (OpenTelemetry: the run path's spans, `tracing.ts`; their export over OTLP, `tracing-export.ts`).
 */
export * from "./log.js";
export * from "./metrics.js";
export * from "./wakeup.js";
export * from "./periodic.js";
export * from "./listen.js";
export * from "./tracing.js";
export * from "./tracing-export.js";
