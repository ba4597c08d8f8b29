/** The audit trail's settings (docs/audit.md): on or off, and how long entries are kept. */
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
  return { ...DEFAULT_AUDIT_SETTINGS, enabled: raw === "on", retentionMs };
}
