/**
 * Turning tracing on: OpenTelemetry's Node tracer provider, its spans batched and exported over
 * OTLP/HTTP (JSON) to a collector, and the tracer handed to ./tracing.ts. Only when configured
 * (KAIROS_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT; src/config/tracing.ts): otherwise nothing
 * here runs and the run path makes no span.
 */
import { context, propagation, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler, TraceIdRatioBasedSampler } from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type { Logger } from "./log.js";
import { setTracer } from "./tracing.js";

export interface TracingSettings {
  /** The collector's OTLP/HTTP base URL (`/v1/traces` is appended), e.g. http://otel-collector:4318. */
  endpoint: string;
  /** The share of new traces kept, 0 to 1 (a span with a parent follows its parent's choice). */
  sampleRatio: number;
  /** service.name of the spans. */
  serviceName: string;
  /** Headers sent with every export (e.g. an API key of a hosted collector). */
  headers: Record<string, string>;
}

/** One provider per process; apps started in one process (tests) share it while any is running. */
let active: { provider: NodeTracerProvider; users: number } | null = null;

/** Starts exporting spans; returns the stop, which flushes what is buffered. */
export function startTracing(settings: TracingSettings, role: string, log: Logger): () => Promise<void> {
  if (active) {
    active.users++;
    return releaseTracing;
  }
  const exporter = new OTLPTraceExporter({ url: `${settings.endpoint.replace(/\/+$/, "")}/v1/traces`, headers: settings.headers });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, "kairos.role": role }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  // The AsyncLocalStorage context manager and the W3C propagator, process-wide.
  provider.register();
  setTracer(provider.getTracer("kairos"));
  active = { provider, users: 1 };
  log.info({ endpoint: settings.endpoint, sampleRatio: settings.sampleRatio, serviceName: settings.serviceName }, "tracing: exporting spans over OTLP/HTTP");
  return releaseTracing;
}

async function releaseTracing(): Promise<void> {
  if (!active || --active.users > 0) return;
  const { provider } = active;
  active = null;
  setTracer(null);
  try {
    await provider.shutdown();
  } finally {
    trace.disable();
    context.disable();
    propagation.disable();
  }
}
