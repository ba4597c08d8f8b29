/**
 * An alert delivery's body (docs/alerts.md, "The webhook"): the full JSON — the rule, the count,
 * each firing (at most ALERT_BODY_MAX_ITEMS listed) with its run's id — or, for a Slack incoming
 * webhook, `{"text": …}` with the same facts in one message.
 */
import { ALERT_BODY_MAX_ITEMS, type AlertEvent, type AlertFiringDoc, type AlertRuleDoc } from "../../domain/index.js";

export interface AlertMessage {
  body: string;
  events: AlertEvent[];
  runIds: string[];
}

export function alertMessage(deliveryId: string, rule: Pick<AlertRuleDoc, "_id" | "name" | "webhook">, firings: readonly AlertFiringDoc[], opts: { test: boolean; at: Date }): AlertMessage {
  const events = [...new Set(firings.map((f) => f.event))];
  const runIds = [...new Set(firings.flatMap((f) => (f.runId ? [f.runId] : [])))];
  const listed = firings.slice(0, ALERT_BODY_MAX_ITEMS);
  const text = summary(rule.name, firings, opts.test);
  if (rule.webhook.slack) return { body: JSON.stringify({ text }), events, runIds };
  const body = {
    deliveryId,
    test: opts.test,
    sentAt: opts.at.toISOString(),
    rule: { id: rule._id, name: rule.name },
    count: firings.length,
    events,
    runIds: runIds.slice(0, ALERT_BODY_MAX_ITEMS),
    alerts: listed.map((f) => ({
      id: f._id,
      event: f.event,
      at: f.at.toISOString(),
      runId: f.runId,
      jobId: f.jobId,
      jobName: f.jobName,
      fireKey: f.fireKey,
      nodeId: f.nodeId,
      detail: f.detail,
    })),
    truncated: firings.length > listed.length,
    text,
  };
  return { body: JSON.stringify(body), events, runIds };
}

function summary(ruleName: string, firings: readonly AlertFiringDoc[], test: boolean): string {
  if (test) return `Kairos test alert for rule "${ruleName}": the webhook works.`;
  if (firings.length === 1) return `Kairos alert "${ruleName}": ${firings[0]!.detail}`;
  const lines = firings.slice(0, 10).map((f) => `• ${f.detail}`);
  const more = firings.length > 10 ? `\n…and ${firings.length - 10} more` : "";
  return `Kairos alert "${ruleName}": ${firings.length} alerts\n${lines.join("\n")}${more}`;
}
