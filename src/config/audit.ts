/** The audit trail's settings (docs/audit.md): on or off, how long entries are kept, and the key its chain is signed with. */
import { DEFAULT_AUDIT_SETTINGS, type AuditSettings } from "../core/index.js";
import { ConfigError } from "../domain/index.js";
import { settingDuration, type Env } from "./parse.js";

const DAY = 86_400_000;

export function auditSettings(env: Env): AuditSettings {
  const raw = (env.KAIROS_AUDIT ?? "on").trim().toLowerCase();
  if (raw !== "on" && raw !== "off") throw new ConfigError(`KAIROS_AUDIT: "${env.KAIROS_AUDIT}" is not one of on, off`);
  const retention = env.KAIROS_AUDIT_RETENTION?.trim() ? env.KAIROS_AUDIT_RETENTION : "P365D";
  const retentionMs = settingDuration("KAIROS_AUDIT_RETENTION", retention);
  if (retentionMs < DAY || retentionMs > 36_500 * DAY) throw new ConfigError(`KAIROS_AUDIT_RETENTION: must be from P1D to P36500D, got "${env.KAIROS_AUDIT_RETENTION}"`);
  return { ...DEFAULT_AUDIT_SETTINGS, enabled: raw === "on", retentionMs, ...auditKeys(env) };
}

const MIN_KEY = 32;

/**
 * `KAIROS_AUDIT_KEY`: the secret the chain's key is derived from (unset: KAIROS_JWT_SECRET's);
 * `KAIROS_AUDIT_PREVIOUS_KEYS`: earlier ones, separated by commas, kept to verify older entries.
 */
function auditKeys(env: Env): { key: string | null; previousKeys: string[] } {
  const key = env.KAIROS_AUDIT_KEY?.trim() ? env.KAIROS_AUDIT_KEY.trim() : null;
  if (key !== null && key.length < MIN_KEY) throw new ConfigError(`KAIROS_AUDIT_KEY: must be at least ${MIN_KEY} characters (use e.g. \`openssl rand -hex 32\`), got ${key.length}`);
  const previousKeys = (env.KAIROS_AUDIT_PREVIOUS_KEYS ?? "").split(",").map((k) => k.trim()).filter(Boolean);
  previousKeys.forEach((k, i) => {
    if (k.length < MIN_KEY) throw new ConfigError(`KAIROS_AUDIT_PREVIOUS_KEYS: key ${i + 1} is ${k.length} characters; each earlier KAIROS_AUDIT_KEY or KAIROS_JWT_SECRET, separated by commas, is at least ${MIN_KEY}`);
  });
  return { key, previousKeys };
}
