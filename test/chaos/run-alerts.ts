/**
 * Run-end alerts in the chaos scenario (issue #31): the silence count's job (./silences.ts) fails
 * during planned stretches, so its runs end FAILED while schedulers die and Redis is lost. A second
 * rule on that job listens to RUN_FAILED, RUN_DEAD, RUN_TIMED_OUT and RECOVERED, its webhook on the
 * scenario's receiver, whose first answers to it are 500s (the deliveries are retried). After the
 * drain, counted from the runs as MongoDB holds them, independently of the alert engine:
 * - every run that ended badly (after the rule was made) must have been received in exactly one
 *   delivery, with the event its status stands for; no run that succeeded may have been;
 * - every success whose previous ended run (by end time) was bad is a recovery: received once, and
 *   no RECOVERED may name another run.
 */
import type { Db } from "mongodb";
import type { Receiver } from "../alerts/receiver.js";
import type { Cluster } from "./harness.js";
import { sleep } from "./harness.js";

const PATH = "/run-events";
const EVENT_OF: Record<string, string> = { FAILED: "RUN_FAILED", DEAD: "RUN_DEAD", TIMED_OUT: "RUN_TIMED_OUT" };
const RUN_EVENTS = new Set(Object.values(EVENT_OF));
/** The receiver answers the rule's first deliveries with this many 500s. */
export const RUN_ALERT_FAILURES = 2;

export interface RunAlertWatch {
  ruleId: string;
  jobId: string;
  createdAt: number;
  rx: Receiver;
}

export interface RunAlertAccount {
  /** Runs that ended badly: each must be received once, with its event. */
  expected: number;
  received: number;
  lost: number;
  doubled: number;
  /** Run alerts received for a run that succeeded, or with another event than its status. */
  unexpected: number;
  /** Successes right after a bad run: each must be received once as RECOVERED. */
  recoveries: number;
  recovered: number;
  recoveredLost: number;
  recoveredDoubled: number;
  /** RECOVERED received naming a run that is not a recovery. */
  recoveredWrong: number;
  deliveries: number;
  /** Requests received, the refused ones (500) not counted. */
  requests: number;
}

/** Makes the rule on `jobId` (the silence count's job, `token`'s), its webhook on `rx`, whose first answers fail. */
export async function watchRunAlerts(c: Cluster, rx: Receiver, token: string, jobId: string): Promise<RunAlertWatch> {
  rx.failNext(PATH, RUN_ALERT_FAILURES, 500);
  const d = await c.gqlOk<{ createAlertRule: { id: string } }>(
    `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`,
    { i: { name: "chaos run events", on: ["RUN_FAILED", "RUN_DEAD", "RUN_TIMED_OUT", "RECOVERED"], jobId, webhook: { url: `${rx.base}${PATH}` } } },
    token,
  );
  const ruleId = d.createAlertRule.id;
  const rule = await (await c.db()).collection<{ _id: string; createdAt: Date }>("alertRules").findOne({ _id: ruleId });
  if (!rule) throw new Error("the run events rule was not stored when it was made");
  return { ruleId, jobId, createdAt: rule.createdAt.getTime(), rx };
}

interface EndedRun {
  _id: string;
  status: string;
  finishedAt: Date;
}

/**
 * Waits (up to `maxMs`) until the scan of ended runs has read past the moment the count began and
 * every firing is sent, then counts the runs that ended before that moment (the job goes on
 * succeeding every second: a later end is left to no one).
 */
export async function accountRunAlerts(db: Db, w: RunAlertWatch, maxMs = 60_000): Promise<RunAlertAccount> {
  const runs = db.collection<EndedRun & { jobId: string }>("runs");
  const firings = db.collection<{ ruleId: string; deliveryId: string | null }>("alertFirings");
  const deliveries = db.collection<{ ruleId: string; status: string }>("alertDeliveries");
  const cursors = db.collection<{ _id: string; at: Date }>("alertCursors");
  const from = Date.now();
  const until = from + maxMs;
  for (;;) {
    // The runs scan moves its cursor after writing its firings; RECOVERED is found on the same pass.
    const cursor = (await cursors.findOne({ _id: "runs" }))?.at.getTime() ?? 0;
    const unsent = await firings.countDocuments({ ruleId: w.ruleId, deliveryId: null });
    const open = await deliveries.countDocuments({ ruleId: w.ruleId, status: { $in: ["PENDING", "SENDING"] } });
    if ((cursor >= from && unsent === 0 && open === 0) || Date.now() > until) break;
    await sleep(500);
  }
  await sleep(1_500);
  const ended = await runs.find({ jobId: w.jobId, finishedAt: { $gte: new Date(w.createdAt), $lt: new Date(from) } } as never, { projection: { status: 1, finishedAt: 1 } }).toArray();
  const messages = w.rx.on(PATH).map((m) => ({ deliveryId: String(m.headers["kairos-delivery-id"]), alerts: m.json.alerts as ReceivedRunAlert[], truncated: m.json.truncated === true }));
  if (messages.some((m) => m.truncated)) throw new Error("a run alert delivery listed only part of its alerts: the count needs them all");
  // Alerts about runs that ended after `from` (none are expected: the job succeeds after its stretches) count as unexpected.
  return countRunAlerts({ runs: ended.map((r) => ({ id: r._id, status: r.status, finishedAt: r.finishedAt.getTime() })), messages });
}

export interface ReceivedRunAlert {
  event: string;
  runId: string | null;
}

/** The count itself (pure): the job's ended runs against the messages received (each delivery id counted once). */
export function countRunAlerts(o: { runs: ReadonlyArray<{ id: string; status: string; finishedAt: number }>; messages: ReadonlyArray<{ deliveryId: string; alerts: readonly ReceivedRunAlert[] }> }): RunAlertAccount {
  const byId = new Map(o.runs.map((r) => [r.id, r]));
  const ordered = [...o.runs].sort((a, b) => a.finishedAt - b.finishedAt || a.id.localeCompare(b.id));
  const recoveries = new Set(ordered.filter((r, i) => r.status === "SUCCEEDED" && i > 0 && EVENT_OF[ordered[i - 1]!.status] !== undefined).map((r) => r.id));
  const ranEvents = new Map<string, number>();
  const recoveredSeen = new Map<string, number>();
  let unexpected = 0;
  let recoveredWrong = 0;
  const seen = new Set<string>();
  for (const m of o.messages) {
    if (seen.has(m.deliveryId)) continue;
    seen.add(m.deliveryId);
    for (const a of m.alerts) {
      const run = a.runId ? byId.get(a.runId) : undefined;
      if (RUN_EVENTS.has(a.event)) {
        if (!run || EVENT_OF[run.status] !== a.event) unexpected++;
        else ranEvents.set(run.id, (ranEvents.get(run.id) ?? 0) + 1);
      } else if (a.event === "RECOVERED") {
        if (!run || !recoveries.has(run.id)) recoveredWrong++;
        else recoveredSeen.set(run.id, (recoveredSeen.get(run.id) ?? 0) + 1);
      }
    }
  }
  const bad = o.runs.filter((r) => EVENT_OF[r.status] !== undefined);
  const received = bad.filter((r) => ranEvents.has(r.id)).length;
  const recovered = [...recoveries].filter((id) => recoveredSeen.has(id)).length;
  return {
    expected: bad.length,
    received,
    lost: bad.length - received,
    doubled: [...ranEvents.values()].filter((n) => n > 1).length,
    unexpected,
    recoveries: recoveries.size,
    recovered,
    recoveredLost: recoveries.size - recovered,
    recoveredDoubled: [...recoveredSeen.values()].filter((n) => n > 1).length,
    recoveredWrong,
    deliveries: seen.size,
    requests: o.messages.length,
  };
}

export const runAlertLine = (a: RunAlertAccount): string =>
  `run_alerts expected=${a.expected} received=${a.received} lost=${a.lost} doubled=${a.doubled} unexpected=${a.unexpected} ` +
  `recovered=${a.recovered}/${a.recoveries} recovered_doubled=${a.recoveredDoubled} recovered_wrong=${a.recoveredWrong} deliveries=${a.deliveries} requests=${a.requests}`;

/** What must not happen to run alerts, as chaos.ts lists violations. */
export function runAlertViolations(a: RunAlertAccount): string[] {
  const out: string[] = [];
  if (a.expected === 0) out.push("no run of the watched job ended badly: the run alerts were not exercised");
  if (a.lost > 0) out.push(`${a.lost} run alerts lost`);
  if (a.doubled > 0) out.push(`${a.doubled} run alerts received in two deliveries`);
  if (a.unexpected > 0) out.push(`${a.unexpected} run alerts for a run that did not end that way`);
  if (a.recoveredLost > 0) out.push(`${a.recoveredLost} recoveries without their RECOVERED alert`);
  if (a.recoveredDoubled > 0) out.push(`${a.recoveredDoubled} RECOVERED alerts received in two deliveries`);
  if (a.recoveredWrong > 0) out.push(`${a.recoveredWrong} RECOVERED alerts naming a run that followed no failure`);
  return out;
}
