/** Tracing (docs/operations.md, "Tracing"): where spans are exported, and how many traces are kept. */
import type { TracingSettings } from "../support/index.js";
import { ConfigError, readDecimal } from "../domain/index.js";
import { url, type Env } from "./parse.js";

/**
 * KAIROS_OTLP_ENDPOINT, else OpenTelemetry's own OTEL_EXPORTER_OTLP_ENDPOINT: the collector's
 * OTLP/HTTP base URL. Unset: no tracing (null). KAIROS_TRACE_SAMPLE_RATIO (0 to 1, default 1),
 * OTEL_SERVICE_NAME (default kairos), OTEL_EXPORTER_OTLP_HEADERS (`k=v,k2=v2`).
 */
export function tracingSettings(env: Env): TracingSettings | null {
  const name = env.KAIROS_OTLP_ENDPOINT ? "KAIROS_OTLP_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT";
  const endpoint = url(name, env[name]?.trim(), ["http:", "https:"]);
  if (endpoint === null) return null;
  const rawRatio = env.KAIROS_TRACE_SAMPLE_RATIO?.trim();
  const read = rawRatio ? readDecimal(rawRatio, false) : { value: 1 };
  const sampleRatio = "value" in read ? read.value : NaN;
  if (!(sampleRatio >= 0 && sampleRatio <= 1)) {
    throw new ConfigError(`KAIROS_TRACE_SAMPLE_RATIO: "${rawRatio}" must be a number from 0 to 1 (the share of new traces kept)${"problem" in read ? `: it ${read.problem}` : ""}`);
  }
  return { endpoint, sampleRatio, serviceName: env.OTEL_SERVICE_NAME?.trim() || "kairos", headers: otlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS) };
}

function otlpHeaders(raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (!raw?.trim()) return headers;
  for (const part of raw.split(",")) {
    const at = part.indexOf("=");
    const key = part.slice(0, at).trim();
    if (at <= 0 || key === "") throw new ConfigError(`OTEL_EXPORTER_OTLP_HEADERS: "${part.trim()}" is not key=value; expected a comma-separated list like api-key=secret,tenant=a`);
    try {
      headers[key] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      throw new ConfigError(`OTEL_EXPORTER_OTLP_HEADERS: the value of ${key} is not valid percent-encoding`);
    }
  }
  return headers;
}
