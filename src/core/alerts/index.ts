/** Alert rules, what they fire on, and their webhook deliveries (issue #31, docs/alerts.md). */
export * from "./bus.js";
export * from "./engine.js";
export * from "./rules.js";
export * from "./sender.js";
export { checkAlertRule, MAX_RATE_MIN_RUNS, type AlertRuleInput } from "./validate.js";
export { deadlineFiring } from "./match.js";
export * from "./deadlines.js";
export { AlertSilences, SILENCE_GRACE_MS } from "./silences.js";
