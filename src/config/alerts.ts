/** The alert settings (docs/alerts.md, docs/configuration.md): where webhooks may go, how many rules a user may have, the group window. */
import { cidrs } from "./cidrs.js";
import { int, settingDuration, type Env } from "./parse.js";

export interface AlertSettings {
  /** Ranges alert webhooks may reach although not public (`KAIROS_ALERT_ALLOWED_CIDRS`). @default none */
  allowedCidrs: string[];
  /** Ranges they may never reach (`KAIROS_ALERT_DENIED_CIDRS`), inside an allowed one too. @default none */
  deniedCidrs: string[];
  /** Most rules per user (`KAIROS_ALERT_MAX_RULES`). @default 100 */
  maxRulesPerUser: number;
  /** A rule's deliveries are at least this far apart; what fires in between goes out as one (`KAIROS_ALERT_GROUP_WINDOW`). @default PT30S */
  groupWindowMs: number;
  /**
   * How far behind now the scans of ended runs and ledger entries read (`KAIROS_ALERT_SCAN_LAG`): a
   * run's end stamped by its executor's clock and written a moment later (batched) must be stored
   * before its instant is read. Raise it with clocks that drift. @default PT5S
   */
  scanLagMs: number;
}

export function alertSettings(env: Env): AlertSettings {
  const groupWindowMs = settingDuration("KAIROS_ALERT_GROUP_WINDOW", env.KAIROS_ALERT_GROUP_WINDOW ?? "PT30S");
  return {
    allowedCidrs: cidrs("KAIROS_ALERT_ALLOWED_CIDRS", env.KAIROS_ALERT_ALLOWED_CIDRS),
    deniedCidrs: cidrs("KAIROS_ALERT_DENIED_CIDRS", env.KAIROS_ALERT_DENIED_CIDRS),
    maxRulesPerUser: int("KAIROS_ALERT_MAX_RULES", env.KAIROS_ALERT_MAX_RULES, 100, 1, 100_000),
    groupWindowMs,
    scanLagMs: settingDuration("KAIROS_ALERT_SCAN_LAG", env.KAIROS_ALERT_SCAN_LAG ?? "PT5S"),
  };
}
