/**
 * The alert collections (docs/alerts.md): `alertRules`, `alertFirings` (one per (rule, subject),
 * `_id` unique: the de-duplication across restarts and instances), `alertDeliveries` (webhook calls,
 * the outbox the dispatcher drains), `alertCursors` (how far the scans of runs and fires have read),
 * `alertStates` (jobs seen failing, for RECOVERED); and their indexes, with the one they add to
 * `fires` for the scans.
 */
import type { AlertDeliveryDoc, AlertFiringDoc, AlertRuleDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

export interface AlertCursorDoc {
  _id: string;
  at: Date;
}

/** A job a RECOVERED rule saw fail: `_id` `<ruleId>|<jobId>`. */
export interface AlertStateDoc {
  _id: string;
  ruleId: string;
  jobId: string;
  failedAt: Date;
}

/** How long firings and deliveries are kept. */
export const ALERT_RETENTION_S = 30 * 24 * 3600;

export function alertCollections(mongo: Mongo) {
  return {
    rules: mongo.db.collection<AlertRuleDoc>("alertRules"),
    firings: mongo.db.collection<AlertFiringDoc>("alertFirings"),
    deliveries: mongo.db.collection<AlertDeliveryDoc>("alertDeliveries"),
    cursors: mongo.db.collection<AlertCursorDoc>("alertCursors"),
    states: mongo.db.collection<AlertStateDoc>("alertStates"),
  };
}

export async function ensureAlertIndexes(mongo: Mongo): Promise<void> {
  const a = alertCollections(mongo);
  await Promise.all([
    a.rules.createIndexes([
      // alertRules(first, after): an owner's rules newest first, in the page's order to the tiebreak
      // (store/alerts/rules.ts); everyone's (administrators, all: true) in the same order.
      { key: { ownerId: 1, createdAt: -1, _id: -1 }, name: "owner_created_id" },
      { key: { createdAt: -1, _id: -1 }, name: "created_id" },
    ]),
    a.firings.createIndexes([
      // A rule's firings not yet in a delivery, oldest first (the dispatcher's grouping).
      { key: { deliveryId: 1, ruleId: 1, at: 1 }, name: "delivery_rule_at" },
      { key: { createdAt: 1 }, name: "created_ttl", expireAfterSeconds: ALERT_RETENTION_S },
    ]),
    a.deliveries.createIndexes([
      { key: { ruleId: 1, createdAt: -1, _id: -1 }, name: "rule_created" },
      { key: { status: 1, nextAttemptAt: 1 }, name: "status_next" },
      { key: { createdAt: 1 }, name: "created_ttl", expireAfterSeconds: ALERT_RETENTION_S },
    ]),
    a.states.createIndexes([{ key: { ruleId: 1 }, name: "rule" }]),
    // The scans: ledger entries by outcome and when recorded. Failed runs by when they ended use
    // runs' status_finished (store/mongo.ts, made for clusterStats).
    mongo.c.fires.createIndexes([{ key: { outcome: 1, recordedAt: 1 }, name: "outcome_recorded" }]),
  ]);
  // Superseded by owner_created_id (the listing's whole order).
  await a.rules.dropIndex("owner_created").catch((e: unknown) => {
    if ((e as { codeName?: string }).codeName !== "IndexNotFound") throw e;
  });
}
