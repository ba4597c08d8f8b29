/**
 * Alert rules for the cost measurement of issue #31 (`bench/kairos.ts --alert-rules N`): N rules of
 * the bench user over all its jobs, spread over the events a healthy bench never triggers (its runs
 * succeed, none waits an hour, no slot is skipped), so what is measured is what the rules cost the
 * scheduler (the alert engine's passes: the rules read, the scans of failed runs and ledger
 * entries, the failure-rate counts) and not webhook traffic. `deadlines` of them are DEADLINE_MISSED
 * rules with a one-hour deadline: each arms a timer on the wheel for every slot that fires.
 */
import type { AlertEvent, AlertRuleDoc } from "../../src/domain/index.js";
import { insertAlertRule } from "../../src/store/alerts/rules.js";
import { newId, type Mongo } from "../../src/store/mongo.js";

const EVENTS: AlertEvent[][] = [["RUN_FAILED", "RUN_DEAD"], ["RUN_TIMED_OUT", "RUN_OOM_KILLED"], ["RECOVERED"], ["FIRE_MISSED", "FIRE_SKIPPED"], ["FAILURE_RATE"], ["QUEUE_LATENESS"]];

export async function insertBenchAlertRules(mongo: Mongo, ownerId: string, count: number, deadlines: number): Promise<void> {
  const now = new Date();
  for (let i = 0; i < count; i++) {
    const on: AlertEvent[] = i < deadlines ? ["DEADLINE_MISSED"] : EVENTS[i % EVENTS.length]!;
    const doc: AlertRuleDoc = {
      _id: newId(), ownerId, name: `bench-${i}`, on, jobId: null, dagId: null, cluster: false, webhook: { url: "http://127.0.0.1:9/none", slack: false },
      mutedUntil: null,
      failureRate: on.includes("FAILURE_RATE") ? { windowMs: 3600_000, threshold: 0.5, minRuns: 10 } : null,
      queueLatenessMs: on.includes("QUEUE_LATENESS") ? 3600_000 : null,
      deadlineMs: on.includes("DEADLINE_MISSED") ? 3600_000 : null,
      createdAt: now, updatedAt: now, lastDeliveryAt: null,
    };
    await insertAlertRule(mongo, doc);
  }
}
