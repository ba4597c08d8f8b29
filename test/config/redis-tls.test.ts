/**
 * The Redis TLS settings (src/config/redis-tls.ts): what each target takes, and a clear error for
 * each bad combination or file.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { ConfigError } from "../../src/domain/index.js";
import { describeRedisTarget } from "../../src/shared-state/index.js";

const dir = mkdtempSync(join(tmpdir(), "kairos-tls-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const CA = file("ca.crt", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
const CERT = file("client.crt", "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n");
const KEY = file("client.key", "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n");
const NOT_PEM = file("ca.der", "\u0030\u0082binary");

const base = { MONGO_URL: "mongodb://h:1" };
const cluster = { ...base, REDIS_CLUSTER_NODES: "10.0.0.1:7000,10.0.0.2:7000" };
const sentinel = { ...base, REDIS_SENTINELS: "s1:26379", REDIS_SENTINEL_NAME: "mymaster" };

describe("Redis TLS settings", () => {
  it("REDIS_TLS=1 on a Cluster reads the CA, certificate and key, and the name to check", () => {
    const c = loadConfig("scheduler", { ...cluster, REDIS_TLS: "1", REDIS_TLS_CA_FILE: CA, REDIS_TLS_CERT_FILE: CERT, REDIS_TLS_KEY_FILE: KEY, REDIS_TLS_SERVERNAME: "redis.internal" });
    expect(c.redis).toMatchObject({ kind: "cluster", tls: { ca: expect.stringContaining("MIIB"), cert: expect.stringContaining("MIIC"), key: expect.stringContaining("MIIE"), servername: "redis.internal" } });
    expect(describeRedisTarget(c.redis!)).toBe("redis cluster 10.0.0.1:7000,10.0.0.2:7000 (TLS)");
  });

  it("behind Sentinel, TLS reaches the sentinels too unless REDIS_SENTINEL_TLS=0", () => {
    const both = loadConfig("executor", { ...sentinel, REDIS_TLS: "true", REDIS_TLS_CA_FILE: CA });
    expect(both.redis).toMatchObject({ kind: "sentinel", tls: { ca: expect.any(String) }, sentinelTls: { ca: expect.any(String) } });
    const dataOnly = loadConfig("executor", { ...sentinel, REDIS_TLS: "1", REDIS_SENTINEL_TLS: "0" });
    expect(dataOnly.redis).toMatchObject({ kind: "sentinel", tls: {} });
    expect(dataOnly.redis).not.toHaveProperty("sentinelTls");
    expect(describeRedisTarget(dataOnly.redis!)).toBe("redis sentinel mymaster via s1:26379 (TLS to the data nodes only)");
  });

  it("a rediss:// URL takes the CA and client certificate; without TLS settings nothing changes", () => {
    const c = loadConfig("scheduler", { ...base, REDIS_URL: "rediss://h:6380", REDIS_TLS_CA_FILE: CA });
    expect(c.redis).toEqual({ kind: "single", url: "rediss://h:6380", tls: { ca: expect.stringContaining("MIIB") } });
    expect(loadConfig("scheduler", { ...base, REDIS_URL: "redis://h:2" }).redis).toEqual({ kind: "single", url: "redis://h:2" });
    expect(loadConfig("scheduler", cluster).redis).not.toHaveProperty("tls");
  });

  it("refuses bad combinations and files with a message naming the setting and what is allowed", () => {
    const bad: Array<[Record<string, string>, RegExp]> = [
      [{ ...cluster, REDIS_TLS: "1", REDIS_TLS_CA_FILE: join(dir, "missing.crt") }, /REDIS_TLS_CA_FILE: cannot read .*missing\.crt \(no such file\); give the path of the CA certificate/],
      [{ ...cluster, REDIS_TLS: "1", REDIS_TLS_CA_FILE: dir }, /REDIS_TLS_CA_FILE: cannot read .* \(a directory, not a file\)/],
      [{ ...cluster, REDIS_TLS: "1", REDIS_TLS_CA_FILE: NOT_PEM }, /REDIS_TLS_CA_FILE: .*ca\.der is not PEM/],
      [{ ...cluster, REDIS_TLS: "1", REDIS_TLS_CERT_FILE: CERT }, /REDIS_TLS_CERT_FILE is set without REDIS_TLS_KEY_FILE: mutual TLS needs the client certificate's private key too/],
      [{ ...cluster, REDIS_TLS: "1", REDIS_TLS_KEY_FILE: KEY }, /REDIS_TLS_KEY_FILE is set without REDIS_TLS_CERT_FILE/],
      [{ ...cluster, REDIS_TLS_CA_FILE: CA }, /REDIS_TLS_CA_FILE set without REDIS_TLS=1: set REDIS_TLS=1 to reach the cluster's nodes over TLS/],
      [{ ...cluster, REDIS_TLS: "maybe" }, /REDIS_TLS: "maybe" must be true or false/],
      [{ ...cluster, REDIS_TLS: "1", REDIS_TLS_SERVERNAME: "https://redis" }, /REDIS_TLS_SERVERNAME: "https:\/\/redis" is not a host name/],
      [{ ...cluster, REDIS_SENTINEL_TLS: "1" }, /REDIS_SENTINEL_TLS is set without REDIS_SENTINELS/],
      [{ ...sentinel, REDIS_SENTINEL_TLS: "1" }, /REDIS_SENTINEL_TLS=1 needs REDIS_TLS=1/],
      [{ ...base, REDIS_URL: "redis://h:2", REDIS_TLS_CA_FILE: CA }, /REDIS_TLS_CA_FILE set, but REDIS_URL is redis:\/\/ \(no TLS\): use rediss:\/\/host:port/],
      [{ ...base, REDIS_URL: "rediss://h:2", REDIS_TLS: "1" }, /REDIS_TLS applies to REDIS_CLUSTER_NODES and REDIS_SENTINELS; for one server use a rediss:\/\/ REDIS_URL/],
    ];
    for (const [env, message] of bad) {
      expect(() => loadConfig("scheduler", env), JSON.stringify(env)).toThrow(ConfigError);
      expect(() => loadConfig("scheduler", env), JSON.stringify(env)).toThrow(message);
    }
    expect(() => loadConfig("dev", { REDIS_TLS: "1" })).toThrow(/REDIS_TLS set without a Redis/);
  });
});
