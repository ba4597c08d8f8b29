/** The log and retention settings: defaults, and refusals that say what is allowed. */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";

const base = { MONGO_URL: "mongodb://127.0.0.1:1", REDIS_URL: "redis://127.0.0.1:1", KAIROS_JWT_SECRET: "x".repeat(40) };

describe("log and retention settings", () => {
  it("defaults: 10 MiB per attempt, logs kept 30 days, runs and fires 5 years", () => {
    const c = loadConfig("api", base);
    expect(c.logs.maxBytes).toBe(10 * 1024 * 1024);
    expect(c.logs.retentionMs).toBe(30 * 86_400_000);
    expect(c.logs.urlTtlSeconds).toBe(300);
    expect(c.retention).toEqual({ runsMs: 1825 * 86_400_000, firesMs: 1825 * 86_400_000, logsMs: 30 * 86_400_000 });
  });

  it("reads them", () => {
    const c = loadConfig("api", { ...base, KAIROS_LOG_MAX_BYTES: "2048", KAIROS_LOG_RETENTION: "P7D", KAIROS_RUN_RETENTION: "P365D", KAIROS_FIRE_RETENTION: "P90D", KAIROS_LOG_URL_TTL: "PT1M", KAIROS_LOG_FLUSH: "PT0.5S" });
    expect(c.logs).toMatchObject({ maxBytes: 2048, retentionMs: 7 * 86_400_000, urlTtlSeconds: 60, flushMs: 500 });
    expect(c.retention).toEqual({ runsMs: 365 * 86_400_000, firesMs: 90 * 86_400_000, logsMs: 7 * 86_400_000 });
  });

  it("refuses bad values, naming the setting and what is allowed", () => {
    expect(() => loadConfig("api", { ...base, KAIROS_LOG_MAX_BYTES: "10" })).toThrow(/KAIROS_LOG_MAX_BYTES: "10" must be a whole number from 1024/);
    expect(() => loadConfig("api", { ...base, KAIROS_LOG_RETENTION: "P400D", KAIROS_RUN_RETENTION: "P365D" })).toThrow(/KAIROS_LOG_RETENTION: a log cannot be kept longer than its run/);
    expect(() => loadConfig("api", { ...base, KAIROS_LOG_URL_TTL: "P30D" })).toThrow(/KAIROS_LOG_URL_TTL: must be from PT10S to P7D/);
    expect(() => loadConfig("api", { ...base, KAIROS_RUN_RETENTION: "5y" })).toThrow(/KAIROS_RUN_RETENTION: "5y" is not an ISO-8601 duration/);
  });
});
