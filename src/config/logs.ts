/** Run logs and retention: the settings, their defaults and bounds (docs/jobs.md, "Run logs and retention"; docs/logs.md). */
import type { LogSettings } from "../core/index.js";
import { DEFAULT_LOG_SETTINGS } from "../core/index.js";
import { ConfigError } from "../domain/index.js";
import { int, settingDuration, type Env } from "./parse.js";
import type { KairosConfig } from "./settings.js";

function bounded(name: string, raw: string | undefined, dflt: string, minMs: number, maxMs: number, what: string): number {
  const ms = settingDuration(name, raw === undefined || raw.trim() === "" ? dflt : raw);
  if (ms < minMs || ms > maxMs) throw new ConfigError(`${name}: must be ${what}, got "${raw}"`);
  return ms;
}

const DAY = 86_400_000;

export function logSettings(env: Env): Pick<KairosConfig, "logs" | "retention"> {
  const runsMs = bounded("KAIROS_RUN_RETENTION", env.KAIROS_RUN_RETENTION, "P1825D", DAY, 36_500 * DAY, "from P1D to P36500D");
  const firesMs = bounded("KAIROS_FIRE_RETENTION", env.KAIROS_FIRE_RETENTION, "P1825D", DAY, 36_500 * DAY, "from P1D to P36500D");
  const logsMs = bounded("KAIROS_LOG_RETENTION", env.KAIROS_LOG_RETENTION, "P30D", 3_600_000, 36_500 * DAY, "from PT1H to P36500D");
  if (logsMs > runsMs) {
    throw new ConfigError(`KAIROS_LOG_RETENTION: a log cannot be kept longer than its run (KAIROS_RUN_RETENTION ${env.KAIROS_RUN_RETENTION ?? "P1825D"}), got "${env.KAIROS_LOG_RETENTION}"`);
  }
  const logs: LogSettings = {
    ...DEFAULT_LOG_SETTINGS,
    maxBytes: int("KAIROS_LOG_MAX_BYTES", env.KAIROS_LOG_MAX_BYTES, DEFAULT_LOG_SETTINGS.maxBytes, 1_024, 1_073_741_824),
    flushMs: bounded("KAIROS_LOG_FLUSH", env.KAIROS_LOG_FLUSH, "PT0.25S", 20, 10_000, "from PT0.02S to PT10S"),
    retentionMs: logsMs,
    urlTtlSeconds: bounded("KAIROS_LOG_URL_TTL", env.KAIROS_LOG_URL_TTL, "PT5M", 10_000, 7 * DAY, "from PT10S to P7D (S3's longest presigned link)") / 1000,
    sweepMs: bounded("KAIROS_LOG_ARCHIVE_SWEEP", env.KAIROS_LOG_ARCHIVE_SWEEP, "PT5S", 50, 3_600_000, "from PT0.05S to PT1H"),
  };
  return { logs, retention: { runsMs, firesMs, logsMs } };
}
