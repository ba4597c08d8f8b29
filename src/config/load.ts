/**
 * Typed configuration. The only module that reads `process.env` (through its `env` argument) and
 * command-line flags. Everything is validated at start with an error that names the bad setting
 * and says what is allowed. Settings are read in a fixed order, so with several bad ones the
 * first error is always the same.
 *
 * Imports from below config: core/resources.ts for the resource setting parser (it checks the
 * resource keys and bounds declared there once), and executor/sandbox/egress.ts for the default
 * egress deny list, a constant declared there (and used only here): see src/config/executor.ts.
 */
import { cpus, hostname } from "node:os";
import { resolve } from "node:path";
import { alertSettings } from "./alerts.js";
import { apiGuard } from "./api.js";
import { artifactSettings, s3Settings } from "./blobs.js";
import { auditSettings } from "./audit.js";
import { adminSettings, jwtSecretSetting, logFormatSetting, logLevelSetting, storeUrls } from "./common.js";
import { poolsSetting, sandboxSettings } from "./executor.js";
import { jobKindSettings } from "./job-kinds.js";
import { logSettings } from "./logs.js";
import { apiPort, int, intOrOff, settingDuration, type Env } from "./parse.js";
import { schedulerSettings } from "./scheduler.js";
import { tracingSettings } from "./tracing.js";
import type { KairosConfig, Role } from "./settings.js";

export function loadConfig(role: Role, env: Env = process.env): KairosConfig {
  const dev = role === "dev";
  const logLevel = logLevelSetting(env);
  const { mongoUrl, redisUrl, redis } = storeUrls(role, env);
  const jwtSecret = jwtSecretSetting(role, env);
  const pools = poolsSetting(env);
  const { adminUser, adminPassword } = adminSettings(env);
  const dataDir = resolve(env.KAIROS_DATA_DIR ?? "./.kairos");
  return {
    role,
    port: apiPort("KAIROS_PORT", env.KAIROS_PORT, 4000, dev),
    host: env.KAIROS_HOST ?? (dev ? "127.0.0.1" : "0.0.0.0"),
    dataDir,
    mongoUrl,
    mongoDb: env.MONGO_DB ?? "kairos",
    redisUrl,
    redis,
    redisPrefix: env.KAIROS_REDIS_PREFIX ?? "kairos",
    jwtSecret,
    jwtTtlMs: settingDuration("KAIROS_JWT_TTL", env.KAIROS_JWT_TTL ?? "PT12H"),
    adminUser,
    adminPassword,
    logLevel,
    logFormat: logFormatSetting(env),
    shards: int("KAIROS_SHARDS", env.KAIROS_SHARDS, 64, 1, 16_384),
    executorSlots: int("KAIROS_EXECUTOR_SLOTS", env.KAIROS_EXECUTOR_SLOTS, Math.max(2, cpus().length * 2), 1, 1_024),
    pools,
    nodeName: env.KAIROS_NODE_NAME ?? hostname(),
    metricsPort: env.KAIROS_METRICS_PORT ? int("KAIROS_METRICS_PORT", env.KAIROS_METRICS_PORT, 0, 0, 65_535) : null,
    leaseMs: settingDuration("KAIROS_LEASE", env.KAIROS_LEASE ?? "PT30S"),
    maxWaitingRuns: intOrOff("KAIROS_MAX_WAITING_RUNS", env.KAIROS_MAX_WAITING_RUNS, 10_000, 1, 100_000_000),
    ...schedulerSettings(env),
    ...sandboxSettings(dev, env),
    ...jobKindSettings(env),
    ...logSettings(env),
    api: apiGuard(env, dev),
    s3: s3Settings(env),
    artifacts: artifactSettings(dev, dataDir, env),
    tracing: tracingSettings(env),
    alerts: alertSettings(env),
    audit: auditSettings(env),
  };
}
