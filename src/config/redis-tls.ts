/**
 * TLS to Redis: `REDIS_TLS=1` for a Cluster (`REDIS_CLUSTER_NODES`) or Sentinel (`REDIS_SENTINELS`:
 * the primary and replicas, and the sentinels too unless `REDIS_SENTINEL_TLS=0`); a `rediss://`
 * `REDIS_URL` for one server. `REDIS_TLS_CA_FILE` (a private CA, PEM; else the system's CAs),
 * `REDIS_TLS_CERT_FILE` with `REDIS_TLS_KEY_FILE` (a client certificate for mutual TLS, PEM), and
 * `REDIS_TLS_SERVERNAME` (the name the servers' certificates are checked against instead of the
 * address connected to) apply to whichever is chosen. The files are read here, so a missing or
 * unreadable one stops the process at start with the setting named, not at the first connect.
 */
import { readFileSync } from "node:fs";
import { ConfigError } from "../domain/index.js";
import type { RedisTls } from "../shared-state/index.js";
import { bool, type Env } from "./parse.js";

const set = (v: string | undefined): v is string => v !== undefined && v.trim() !== "";

const FILES = ["REDIS_TLS_CA_FILE", "REDIS_TLS_CERT_FILE", "REDIS_TLS_KEY_FILE"] as const;

/** A PEM file's contents; a ConfigError naming the setting when it cannot be read or holds no PEM block. */
function pemFile(name: string, path: string, what: string): string {
  let text: string;
  try {
    text = readFileSync(path.trim(), "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : code === "EISDIR" ? "a directory, not a file" : (err as Error).message;
    throw new ConfigError(`${name}: cannot read ${path.trim()} (${why}); give the path of ${what} in PEM form`);
  }
  if (!/-----BEGIN [A-Z0-9 ]+-----/.test(text)) throw new ConfigError(`${name}: ${path.trim()} is not PEM (no -----BEGIN …----- line); give ${what} in PEM form`);
  return text;
}

/** Whether any TLS setting is given (REDIS_TLS itself aside). */
function tlsDetailsSet(env: Env): string[] {
  return [...FILES, "REDIS_TLS_SERVERNAME"].filter((n) => set(env[n]));
}

/**
 * The TLS of the chosen Redis target, or undefined without TLS. `kind` is the target chosen
 * (config/redis.ts); `rediss` whether REDIS_URL's scheme is `rediss:`.
 */
export function redisTlsSetting(env: Env, kind: "single" | "cluster" | "sentinel" | null, rediss = false): { tls?: RedisTls; sentinelTls?: RedisTls } {
  const details = tlsDetailsSet(env);
  const on = bool("REDIS_TLS", env.REDIS_TLS, false);
  if (set(env.REDIS_SENTINEL_TLS) && kind !== "sentinel") throw new ConfigError("REDIS_SENTINEL_TLS is set without REDIS_SENTINELS: it says whether the sentinels are reached over TLS");
  if (kind === null) {
    if (on || details.length > 0) throw new ConfigError(`${on ? "REDIS_TLS" : details.join(", ")} set without a Redis (REDIS_URL with rediss://, REDIS_CLUSTER_NODES or REDIS_SENTINELS)`);
    return {};
  }
  if (kind === "single") {
    if (on) throw new ConfigError("REDIS_TLS applies to REDIS_CLUSTER_NODES and REDIS_SENTINELS; for one server use a rediss:// REDIS_URL (TLS) or redis:// (none)");
    if (!rediss) {
      if (details.length > 0) throw new ConfigError(`${details.join(", ")} set, but REDIS_URL is redis:// (no TLS): use rediss://host:port for TLS, or unset them`);
      return {};
    }
  } else if (!on) {
    if (details.length > 0) throw new ConfigError(`${details.join(", ")} set without REDIS_TLS=1: set REDIS_TLS=1 to reach the ${kind === "cluster" ? "cluster's nodes" : "primary behind Sentinel"} over TLS, or unset them`);
    if (set(env.REDIS_SENTINEL_TLS) && bool("REDIS_SENTINEL_TLS", env.REDIS_SENTINEL_TLS, false)) throw new ConfigError("REDIS_SENTINEL_TLS=1 needs REDIS_TLS=1 (TLS to the sentinels and to the primary and replicas they name)");
    return {};
  }
  if (set(env.REDIS_TLS_CERT_FILE) !== set(env.REDIS_TLS_KEY_FILE)) {
    throw new ConfigError(
      set(env.REDIS_TLS_CERT_FILE)
        ? "REDIS_TLS_CERT_FILE is set without REDIS_TLS_KEY_FILE: mutual TLS needs the client certificate's private key too"
        : "REDIS_TLS_KEY_FILE is set without REDIS_TLS_CERT_FILE: mutual TLS needs the client certificate the key belongs to",
    );
  }
  const servername = env.REDIS_TLS_SERVERNAME?.trim();
  if (servername && !/^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(servername)) {
    throw new ConfigError(`REDIS_TLS_SERVERNAME: "${servername}" is not a host name (letters, digits, '.', '-'; the name in the servers' certificates)`);
  }
  const tls: RedisTls = {
    ...(set(env.REDIS_TLS_CA_FILE) ? { ca: pemFile("REDIS_TLS_CA_FILE", env.REDIS_TLS_CA_FILE, "the CA certificate(s) that signed the Redis servers' certificates") } : {}),
    ...(set(env.REDIS_TLS_CERT_FILE) ? { cert: pemFile("REDIS_TLS_CERT_FILE", env.REDIS_TLS_CERT_FILE, "the client certificate") } : {}),
    ...(set(env.REDIS_TLS_KEY_FILE) ? { key: pemFile("REDIS_TLS_KEY_FILE", env.REDIS_TLS_KEY_FILE, "the client certificate's private key") } : {}),
    ...(servername ? { servername } : {}),
  };
  if (kind !== "sentinel") return { tls };
  return bool("REDIS_SENTINEL_TLS", env.REDIS_SENTINEL_TLS, true) ? { tls, sentinelTls: tls } : { tls };
}
