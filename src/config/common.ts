/** Settings every role reads: logging, the stores, the JWT secret, the bootstrap admin. */
import { ConfigError } from "../domain/index.js";
import { LOG_FORMATS, LOG_LEVELS, type LogFormatSetting, type LogLevel } from "../support/index.js";
import type { RedisTarget } from "../shared-state/index.js";
import { url, type Env } from "./parse.js";
import { redisTargetSetting } from "./redis.js";
import type { Role } from "./settings.js";

export function logLevelSetting(env: Env): LogLevel {
  const logLevel = (env.KAIROS_LOG_LEVEL ?? "info") as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`KAIROS_LOG_LEVEL: "${env.KAIROS_LOG_LEVEL}" is not one of ${LOG_LEVELS.join(", ")}`);
  }
  return logLevel;
}

/** `KAIROS_LOG_FORMAT`: json, pretty, or auto (unset). */
export function logFormatSetting(env: Env): LogFormatSetting {
  const format = (env.KAIROS_LOG_FORMAT ?? "auto").toLowerCase() as LogFormatSetting;
  if (!LOG_FORMATS.includes(format)) {
    throw new ConfigError(`KAIROS_LOG_FORMAT: "${env.KAIROS_LOG_FORMAT}" is not one of json, pretty, auto (unset: lines for people when kairos dev writes to a terminal, JSON otherwise)`);
  }
  return format;
}

/**
 * `MONGO_URL` and Redis (`REDIS_URL`, `REDIS_CLUSTER_NODES` or `REDIS_SENTINELS`: ./redis.ts):
 * required for every role but dev, which embeds a store and runs without Redis.
 */
export function storeUrls(role: Role, env: Env): { mongoUrl: string | null; redisUrl: string | null; redis: RedisTarget | null } {
  const dev = role === "dev";
  const mongoUrl = url("MONGO_URL", env.MONGO_URL, ["mongodb:", "mongodb+srv:"]);
  const redis = redisTargetSetting(env);
  if (!dev && !mongoUrl) throw new ConfigError(`MONGO_URL is required for the ${role} role (only dev embeds a store)`);
  if (!dev && !redis) throw new ConfigError(`REDIS_URL is required for the ${role} role, or REDIS_CLUSTER_NODES (a Redis Cluster), or REDIS_SENTINELS with REDIS_SENTINEL_NAME (Sentinel); only dev runs without Redis`);
  return { mongoUrl, redisUrl: redis?.kind === "single" ? redis.url : null, redis };
}

/** `KAIROS_JWT_SECRET`: required where tokens are issued or checked (api), generated in dev. */
export function jwtSecretSetting(role: Role, env: Env): string | null {
  const jwtSecret = env.KAIROS_JWT_SECRET ?? null;
  if (jwtSecret !== null && jwtSecret.length < 32) {
    throw new ConfigError("KAIROS_JWT_SECRET: must be at least 32 characters (use e.g. `openssl rand -hex 32`)");
  }
  if (role !== "dev" && role !== "executor" && role !== "scheduler" && jwtSecret === null) {
    throw new ConfigError(`KAIROS_JWT_SECRET is required for the ${role} role (only dev generates one)`);
  }
  return jwtSecret;
}

export function adminSettings(env: Env): { adminUser: string; adminPassword: string | null } {
  const adminUser = env.KAIROS_ADMIN_USER ?? "admin";
  if (!/^[A-Za-z0-9_.@-]{3,64}$/.test(adminUser)) {
    throw new ConfigError("KAIROS_ADMIN_USER: 3–64 characters of letters, digits, '_', '.', '@', '-'");
  }
  const adminPassword = env.KAIROS_ADMIN_PASSWORD ?? null;
  if (adminPassword !== null && adminPassword.length < 8) {
    throw new ConfigError("KAIROS_ADMIN_PASSWORD: at least 8 characters");
  }
  return { adminUser, adminPassword };
}
