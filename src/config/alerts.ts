/** The alert settings (docs/alerts.md, docs/configuration.md): where webhooks may go, how many rules a user may have, the group window. */
import { ConfigError } from "../domain/index.js";
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
  /**
   * How long after a deadline (DEADLINE_MISSED) or a silence's due time (SCHEDULE_SILENT) its
   * timer is handled (`KAIROS_ALERT_TIMER_GRACE`): a run's end is stamped by its executor and
   * written a moment later (batched), so a run that ended just in time may still read RUNNING at
   * the instant itself. Whether it was in time is judged on its end, not on when the timer ran.
   * The API (which arms a watch when a rule is made) and the schedulers should have the same.
   * PT0.1S to PT5M. @default PT5S
   */
  timerGraceMs: number;
}

/** Timer grace bounds: a tenth of a second (below it, an end written late reads as missed) to 5 minutes. */
function timerGrace(raw: string | undefined): number {
  const ms = settingDuration("KAIROS_ALERT_TIMER_GRACE", raw === undefined || raw.trim() === "" ? "PT5S" : raw);
  if (ms < 100 || ms > 300_000) throw new ConfigError(`KAIROS_ALERT_TIMER_GRACE: must be from PT0.1S to PT5M, got "${raw}"`);
  return ms;
}

export function alertSettings(env: Env): AlertSettings {
  const groupWindowMs = settingDuration("KAIROS_ALERT_GROUP_WINDOW", env.KAIROS_ALERT_GROUP_WINDOW ?? "PT30S");
  return {
    allowedCidrs: cidrs("KAIROS_ALERT_ALLOWED_CIDRS", env.KAIROS_ALERT_ALLOWED_CIDRS),
    deniedCidrs: cidrs("KAIROS_ALERT_DENIED_CIDRS", env.KAIROS_ALERT_DENIED_CIDRS),
    maxRulesPerUser: int("KAIROS_ALERT_MAX_RULES", env.KAIROS_ALERT_MAX_RULES, 100, 1, 100_000),
    groupWindowMs,
    scanLagMs: settingDuration("KAIROS_ALERT_SCAN_LAG", env.KAIROS_ALERT_SCAN_LAG ?? "PT5S"),
    timerGraceMs: timerGrace(env.KAIROS_ALERT_TIMER_GRACE),
  };
}
