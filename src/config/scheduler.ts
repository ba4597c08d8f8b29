/** The scheduler role's settings with bounds of their own. */
import { ConfigError } from "../domain/index.js";
import { settingDuration, type Env } from "./parse.js";
import type { KairosConfig } from "./settings.js";

/** Shard lease bounds: at least three 2 s renewals fit in it; at most 10 minutes of takeover delay. */
function shardLease(raw: string | undefined): number {
  const ms = settingDuration("KAIROS_SHARD_LEASE", raw ?? "PT15S");
  if (ms < 6_000 || ms > 600_000) {
    throw new ConfigError(`KAIROS_SHARD_LEASE: must be from PT6S to PT10M (renewed every 2 s; a crashed scheduler's shards wait this long), got "${raw}"`);
  }
  return ms;
}

/** Stage-ahead bounds: off, up to 5 minutes (a job changed within the window has its staged runs taken back). */
function stageAhead(raw: string | undefined): number {
  if (raw !== undefined && /^(PT0+(\.0+)?S|0)$/.test(raw.trim())) return 0;
  const ms = settingDuration("KAIROS_STAGE_AHEAD", raw === undefined || raw.trim() === "" ? "PT10S" : raw);
  if (ms > 300_000) throw new ConfigError(`KAIROS_STAGE_AHEAD: must be from PT0S (off) to PT5M, got "${raw}"`);
  return ms;
}

export function schedulerSettings(env: Env): Pick<KairosConfig, "shardLeaseMs" | "stageAheadMs" | "catchupWindowMs"> {
  return {
    shardLeaseMs: shardLease(env.KAIROS_SHARD_LEASE),
    stageAheadMs: stageAhead(env.KAIROS_STAGE_AHEAD),
    catchupWindowMs: settingDuration("KAIROS_CATCHUP_WINDOW", env.KAIROS_CATCHUP_WINDOW ?? "PT1H"),
  };
}
