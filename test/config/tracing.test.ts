/** The tracing settings (src/config/tracing.ts): when tracing is on, where it exports, and the errors for bad values. */
import { describe, expect, it } from "vitest";
import { tracingSettings } from "../../src/config/tracing.js";
import { ConfigError } from "../../src/domain/index.js";

describe("tracing settings", () => {
  it("off unless an endpoint is set (KAIROS_OTLP_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT; empty is unset)", () => {
    expect(tracingSettings({})).toBeNull();
    expect(tracingSettings({ KAIROS_OTLP_ENDPOINT: "" })).toBeNull();
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel:4318" })?.endpoint).toBe("http://otel:4318");
    expect(tracingSettings({ KAIROS_OTLP_ENDPOINT: "https://a:4318", OTEL_EXPORTER_OTLP_ENDPOINT: "http://b:4318" })?.endpoint).toBe("https://a:4318");
  });

  it("defaults: every trace kept, service kairos, no headers", () => {
    expect(tracingSettings({ KAIROS_OTLP_ENDPOINT: "http://otel:4318" })).toEqual({ endpoint: "http://otel:4318", sampleRatio: 1, serviceName: "kairos", headers: {} });
  });

  it("reads the ratio, the service name and the headers", () => {
    const s = tracingSettings({ KAIROS_OTLP_ENDPOINT: "http://otel:4318", KAIROS_TRACE_SAMPLE_RATIO: "0.25", OTEL_SERVICE_NAME: "kairos-eu", OTEL_EXPORTER_OTLP_HEADERS: "api-key=s%3Dcret, tenant=a" });
    expect(s).toEqual({ endpoint: "http://otel:4318", sampleRatio: 0.25, serviceName: "kairos-eu", headers: { "api-key": "s=cret", tenant: "a" } });
  });

  it("refuses what it cannot use, naming the setting and what is allowed", () => {
    const refused = (env: Record<string, string>) => {
      try {
        tracingSettings(env);
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError);
        return (e as Error).message;
      }
      throw new Error("accepted");
    };
    expect(refused({ KAIROS_OTLP_ENDPOINT: "otel:4318" })).toMatch(/^KAIROS_OTLP_ENDPOINT: .*not a URL|KAIROS_OTLP_ENDPOINT: scheme/);
    expect(refused({ OTEL_EXPORTER_OTLP_ENDPOINT: "grpc://otel:4317" })).toMatch(/^OTEL_EXPORTER_OTLP_ENDPOINT: scheme grpc: is not supported; use http: or https:/);
    expect(refused({ KAIROS_OTLP_ENDPOINT: "http://o:4318", KAIROS_TRACE_SAMPLE_RATIO: "2" })).toMatch(/KAIROS_TRACE_SAMPLE_RATIO: "2" must be a number from 0 to 1/);
    expect(refused({ KAIROS_OTLP_ENDPOINT: "http://o:4318", KAIROS_TRACE_SAMPLE_RATIO: "half" })).toMatch(/KAIROS_TRACE_SAMPLE_RATIO/);
    expect(refused({ KAIROS_OTLP_ENDPOINT: "http://o:4318", OTEL_EXPORTER_OTLP_HEADERS: "novalue" })).toMatch(/OTEL_EXPORTER_OTLP_HEADERS: "novalue" is not key=value/);
    expect(refused({ KAIROS_OTLP_ENDPOINT: "http://o:4318", OTEL_EXPORTER_OTLP_HEADERS: "k=%zz" })).toMatch(/OTEL_EXPORTER_OTLP_HEADERS: the value of k is not valid percent-encoding/);
  });
});
