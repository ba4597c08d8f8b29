/**
 * Alerts and deadlines in the chaos scenario (issue #31): a DEADLINE_MISSED rule on every job with
 * a 1 s deadline (the jobs sleep 0.2–1 s, so some slots meet it and some do not), its webhook on a
 * local receiver. After the drain, every slot whose run had not ended by its deadline must have been
 * received in exactly one delivery (deliveries de-duplicated by their id, as a receiver does), and
 * no slot whose run ended in time may have been.
 */
import type { Db } from "mongodb";
import { startReceiver, type Receiver } from "../alerts/receiver.js";
import type { Cluster } from "./harness.js";
import { sleep } from "./harness.js";

export const ALERT_DEADLINE_MS = 1_000;
/** What the Kairos processes of the scenario need to reach the receiver. */
export const ALERT_ENV = { KAIROS_ALERT_ALLOWED_CIDRS: "127.0.0.1/32", KAIROS_ALERT_GROUP_WINDOW: "PT1S", KAIROS_ALERT_SCAN_LAG: "PT1S" };

export interface AlertAccount {
  /** Slots that missed their deadline (no run, or a run not ended by it). */
  expected: number;
  /** Of those, received in a delivery. */
  received: number;
  lost: number;
  /** Slots received in two or more deliveries of different ids. */
  doubled: number;
  /** Slots received that met their deadline. */
  unexpected: number;
  /** Deliveries received (distinct ids) and the requests that carried them. */
  deliveries: number;
  requests: number;
}

export interface AlertWatch {
  ruleId: string;
  rx: Receiver;
}

/** Starts the receiver and makes the rule; call before the jobs are made (rules are read every 2 s). */
export async function watchDeadlines(c: Cluster): Promise<AlertWatch> {
  const rx = await startReceiver();
  const d = await c.gqlOk<{ createAlertRule: { id: string } }>(`mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`, {
    i: { name: "chaos deadlines", on: ["DEADLINE_MISSED"], deadline: `PT${ALERT_DEADLINE_MS / 1000}S`, webhook: { url: `${rx.base}/deadlines` } },
  });
  return { ruleId: d.createAlertRule.id, rx };
}

/** Waits (up to `maxMs`) for every deadline to be decided and delivered, then counts. */
export async function accountDeadlines(db: Db, w: AlertWatch, jobIds: readonly string[], windowEnd: number, maxMs = 60_000): Promise<AlertAccount> {
  const deadlines = db.collection<{ _id: string; state: string }>("alertDeadlines");
  const firings = db.collection<{ _id: string; deliveryId: string | null }>("alertFirings");
  const deliveries = db.collection<{ _id: string; status: string; firingIds: string[] }>("alertDeliveries");
  const until = Date.now() + maxMs;
  // Every deadline is due by windowEnd + the drain + 1 s; then each decided, each firing sent.
  while (Date.now() < until) {
    const armed = await deadlines.countDocuments({ _id: { $regex: `^${w.ruleId}\\|` }, state: "ARMED" } as never);
    const unsent = await firings.countDocuments({ ruleId: w.ruleId, deliveryId: null } as never);
    const open = await deliveries.countDocuments({ ruleId: w.ruleId, status: { $in: ["PENDING", "SENDING"] } } as never);
    if (armed === 0 && unsent === 0 && open === 0 && Date.now() > windowEnd + ALERT_DEADLINE_MS) break;
    await sleep(500);
  }
  await sleep(1_500);
  // The slots that missed their deadline, from the ledger and the runs as they ended.
  const fired = await db.collection<{ _id: string; slotAt: Date }>("fires").find({ jobId: { $in: [...jobIds] }, outcome: "FIRED" }).toArray();
  const runs = await db.collection<{ fireKey: string; status: string; finishedAt: Date | null }>("runs").find({ fireKey: { $in: fired.map((f) => f._id) } }, { projection: { fireKey: 1, status: 1, finishedAt: 1 } }).toArray();
  const byKey = new Map(runs.map((r) => [r.fireKey, r]));
  const FINAL = new Set(["SUCCEEDED", "FAILED", "DEAD", "TIMED_OUT", "CANCELLED"]);
  const missed = new Set<string>();
  for (const f of fired) {
    const r = byKey.get(f._id);
    const inTime = r && FINAL.has(r.status) && r.finishedAt && r.finishedAt.getTime() <= f.slotAt.getTime() + ALERT_DEADLINE_MS;
    if (!inTime) missed.add(f._id);
  }
  // What the receiver got: each distinct delivery id once; the slots each carried.
  const byDelivery = new Map<string, string[]>();
  for (const m of w.rx.on("/deadlines")) {
    const id = String(m.headers["kairos-delivery-id"]);
    if (byDelivery.has(id)) continue;
    let keys: string[] = (m.json.alerts as Array<{ fireKey: string }>).map((a) => a.fireKey);
    if (m.json.truncated) {
      const d = await deliveries.findOne({ _id: id });
      keys = (d?.firingIds ?? []).map((f) => f.slice(f.indexOf("|deadline:") + "|deadline:".length));
    }
    byDelivery.set(id, keys);
  }
  const seen = new Map<string, number>();
  for (const keys of byDelivery.values()) for (const k of keys) seen.set(k, (seen.get(k) ?? 0) + 1);
  let received = 0;
  for (const k of missed) if (seen.has(k)) received++;
  return {
    expected: missed.size,
    received,
    lost: missed.size - received,
    doubled: [...seen.values()].filter((n) => n > 1).length,
    unexpected: [...seen.keys()].filter((k) => !missed.has(k)).length,
    deliveries: byDelivery.size,
    requests: w.rx.on("/deadlines").length,
  };
}

export const alertLine = (a: AlertAccount): string =>
  `deadline_alerts expected=${a.expected} received=${a.received} lost=${a.lost} doubled=${a.doubled} unexpected=${a.unexpected} deliveries=${a.deliveries} requests=${a.requests}`;

/** What must not happen to deadline alerts, as chaos.ts lists violations. */
export function alertViolations(a: AlertAccount): string[] {
  const out: string[] = [];
  if (a.expected === 0) out.push("no slot missed its 1 s deadline: the deadline alerts were not exercised");
  if (a.lost > 0) out.push(`${a.lost} deadline alerts lost`);
  if (a.doubled > 0) out.push(`${a.doubled} deadline alerts received in two deliveries`);
  if (a.unexpected > 0) out.push(`${a.unexpected} deadline alerts for slots whose run ended in time`);
  return out;
}
