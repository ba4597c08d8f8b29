/**
 * Alerts wired (docs/alerts.md): the rules service of the API, and the engine of the scheduler role,
 * run by the owner of shard 0. Both send through their own SSRF-filtering agents
 * (KAIROS_ALERT_ALLOWED_CIDRS / _DENIED_CIDRS) and sign with the rule owner's HTTP signing secret.
 */
import type { KairosConfig } from "../config/index.js";
import { AlertBus, AlertEngine, AlertRules, AlertSender, AlertSilences, DEFAULT_SENDER, HttpSigning, httpAgents } from "../core/index.js";
import type { Clock, SharedState } from "../shared-state/index.js";
import type { Mongo } from "../store/index.js";
import type { Logger } from "../support/index.js";
import type { Stops } from "./stops.js";

/** How often the alert engine passes. */
const ALERT_PASS_MS = 1_000;

interface AlertDeps {
  mongo: Mongo;
  state: SharedState;
  clock: Clock;
  log: Logger;
}

function sender(config: KairosConfig, deps: AlertDeps, stops: Stops): AlertSender {
  const agents = httpAgents({ allowedCidrs: config.alerts.allowedCidrs, deniedCidrs: config.alerts.deniedCidrs });
  stops.push(async () => agents.destroy());
  const signing = new HttpSigning({ mongo: deps.mongo, clock: deps.clock });
  return new AlertSender({ mongo: deps.mongo, signing, agents, clock: deps.clock, options: DEFAULT_SENDER, userAgent: "Kairos-Alerts/1" });
}

/**
 * SCHEDULE_SILENT watches, armed on the wheel as rules are made and (rules on all of a user's jobs)
 * as recurring jobs are made (the job service is told of them); the schedulers handle them.
 */
export function buildAlertSilences(config: KairosConfig, deps: AlertDeps): AlertSilences {
  return new AlertSilences({ mongo: deps.mongo, state: deps.state, clock: deps.clock, log: deps.log.child({ component: "alert-silences" }), graceMs: config.alerts.timerGraceMs });
}

export function buildAlertRules(config: KairosConfig, deps: AlertDeps, silences: AlertSilences, stops: Stops): { alerts: AlertRules; alertBus: AlertBus } {
  const alertBus = new AlertBus(deps.state.bus);
  const alerts = new AlertRules({ mongo: deps.mongo, clock: deps.clock, sender: sender(config, deps, stops), bus: alertBus, maxRulesPerUser: config.alerts.maxRulesPerUser, silences });
  return { alerts, alertBus };
}

/** The scheduler role's alert engine; it works only while `leader()` (this scheduler owns shard 0). */
export function startAlertEngine(config: KairosConfig, deps: AlertDeps, leader: () => boolean, stops: Stops): AlertEngine {
  const engine = new AlertEngine(
    { mongo: deps.mongo, clock: deps.clock, log: deps.log.child({ component: "alerts" }), sender: sender(config, deps, stops), bus: new AlertBus(deps.state.bus), leader },
    { passMs: ALERT_PASS_MS, lagMs: config.alerts.scanLagMs, groupWindowMs: config.alerts.groupWindowMs },
  );
  engine.start();
  stops.push(() => engine.stop());
  return engine;
}
