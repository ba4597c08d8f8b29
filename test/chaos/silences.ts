/**
 * Silent schedules in the chaos scenario (issue #31): one job every second, watched by a
 * SCHEDULE_SILENT rule, whose command fails during planned stretches of the window (the faults fall
 * in them), so it goes silent while schedulers die and Redis is lost. After the drain its silences
 * are read from its successful runs, independently of the product: every gap between two successes
 * (the first from when the watch began) longer than `silentFor` plus a tolerance must have been
 * received once, none shorter than `silentFor` may have been, and every received silence that a
 * success ended must have been followed by one SCHEDULE_SILENT_RESOLVED naming that success.
 */
import type { Db } from "mongodb";
import type { Receiver } from "../alerts/receiver.js";
import type { Cluster } from "./harness.js";
import { sleep } from "./harness.js";

export const SILENT_FOR_MS = 5_000;
/**
 * A gap longer than silentFor by less than this may or may not be reported: its check comes
 * silentFor plus the grace (5 s) after the last success, later when the shard's scheduler was just
 * killed (its lease, 15 s), and a success found by the check moves the silence on.
 */
export const SILENCE_TOLERANCE_MS = 25_000;
const PATH = "/silences";

export interface SilenceWatch {
  ruleId: string;
  jobId: string;
  /** When the watch began: the first silence counts from here. */
  since: number;
  rx: Receiver;
}

export interface SilenceAccount {
  /** Gaps between successes longer than silentFor + the tolerance: must each be received once. */
  expected: number;
  received: number;
  lost: number;
  /** Gaps longer than silentFor but within the tolerance (received or not, both right). */
  borderline: number;
  /** Silences received in two or more deliveries of different ids. */
  doubled: number;
  /** Silences received that no gap longer than silentFor started at (a false alarm). */
  unexpected: number;
  /** Received silences a success ended (long enough ago to be told), and of those, the resolutions received naming that success. */
  resolvable: number;
  resolved: number;
  resolvedDoubled: number;
  /** Resolutions received for no silence received, or naming another success than the first after it. */
  resolvedWrong: number;
  /** The gaps counted lost: start (ISO) and length, `open` when no success had ended it at the count. */
  lostGaps: string[];
  deliveries: number;
  requests: number;
}

/** The command of the watched job: fails while the time is in one of `stretches` (epoch ms), succeeds otherwise. */
export function silenceCommand(stretches: ReadonlyArray<readonly [number, number]>): string {
  const inside = stretches.map(([a, b]) => `{ [ "$t" -ge ${a} ] && [ "$t" -lt ${b} ]; }`).join(" || ");
  return `t=$(date +%s%3N); if ${inside || "false"}; then exit 1; fi; exit 0`;
}

/** The user the watched job and its rule belong to (made before the window's time is fixed: logging in is slow on a loaded host); its token. */
export async function silenceUser(c: Cluster): Promise<string> {
  await c.gqlOk(`mutation { createUser(username: "chaos-silence", password: "chaos-silence-password") { id } }`);
  return c.login("chaos-silence", "chaos-silence-password");
}

/**
 * Makes the watched job (every second, failing during `stretches`) and its rule, its webhook on `rx`,
 * as `token`'s user (silenceUser): the scenario's deadline rule watches all of the administrator's
 * jobs, and counts theirs only.
 */
export async function watchSilence(c: Cluster, rx: Receiver, token: string, stretches: ReadonlyArray<readonly [number, number]>): Promise<SilenceWatch> {
  const jobId = await c.createJob(
    { name: "chaos-silent", schedule: { kind: "INTERVAL", every: "PT1S" }, retry: { maxAttempts: 1 }, spec: { command: silenceCommand(stretches), timeout: "PT10S" } },
    token,
  );
  const d = await c.gqlOk<{ createAlertRule: { id: string } }>(
    `mutation($i: CreateAlertRuleInput!) { createAlertRule(input: $i) { id } }`,
    { i: { name: "chaos silence", on: ["SCHEDULE_SILENT"], jobId, silentFor: `PT${SILENT_FOR_MS / 1000}S`, webhook: { url: `${rx.base}${PATH}` } } },
    token,
  );
  const ruleId = d.createAlertRule.id;
  const db = await c.db();
  const w = await db.collection<{ _id: string; since: Date }>("alertSilences").findOne({ _id: `${ruleId}|${jobId}` });
  if (!w) throw new Error("the silence rule's watch was not recorded when the rule was made");
  return { ruleId, jobId, since: w.since.getTime(), rx };
}

interface Gap {
  start: number;
  /** The success that ended it (null: still open when counted). */
  end: number | null;
  length: number;
}

/** Waits (up to `maxMs`) for the rule's firings to be sent, then counts its silences against the job's successes. */
export async function accountSilences(db: Db, w: SilenceWatch, maxMs = 60_000): Promise<SilenceAccount> {
  const firings = db.collection<{ _id: string; ruleId: string; event: string; deliveryId: string | null }>("alertFirings");
  const deliveries = db.collection<{ _id: string; ruleId: string; status: string }>("alertDeliveries");
  const runs = db.collection<{ jobId: string; status: string; finishedAt: Date | null }>("runs");
  const watches = db.collection<{ _id: string; checkedAt: Date }>("alertSilences");
  const from = Date.now();
  const until = from + maxMs;
  // Every silence a success ended is told within silentFor + the grace of that success (the job
  // succeeds every second after the window): wait for those resolutions and for every delivery.
  for (;;) {
    const all = await firings.find({ ruleId: w.ruleId }).toArray();
    const unsent = all.filter((f) => f.deliveryId === null).length;
    const open = await deliveries.countDocuments({ ruleId: w.ruleId, status: { $in: ["PENDING", "SENDING"] } });
    const silences = all.filter((f) => f.event === "SCHEDULE_SILENT").length;
    const resolutions = all.filter((f) => f.event === "SCHEDULE_SILENT_RESOLVED").length;
    // And the watch checked since the count began: a check that was due (late on a loaded host) has run.
    const checked = ((await watches.findOne({ _id: `${w.ruleId}|${w.jobId}` }))?.checkedAt.getTime() ?? 0) >= from;
    if ((checked && unsent === 0 && open === 0 && resolutions >= silences) || Date.now() > until) break;
    await sleep(500);
  }
  await sleep(1_500);
  const now = Date.now();
  const successes = (await runs.find({ jobId: w.jobId, status: "SUCCEEDED", finishedAt: { $gt: new Date(w.since) } }, { projection: { finishedAt: 1 } }).toArray()).map((r) => r.finishedAt!.getTime());
  const messages = w.rx.on(PATH).map((m) => ({ deliveryId: String(m.headers["kairos-delivery-id"]), alerts: m.json.alerts as ReceivedAlert[] }));
  return countSilences({ since: w.since, successes, now, messages });
}

export interface ReceivedAlert {
  id: string;
  event: string;
  at: string;
}

/**
 * The count itself (pure): the gaps between `successes` (end times, ms; the first gap from `since`,
 * the last up to `now`) against the messages received (each delivery id counted once).
 */
export function countSilences(o: { since: number; successes: readonly number[]; now: number; messages: ReadonlyArray<{ deliveryId: string; alerts: readonly ReceivedAlert[] }> }): SilenceAccount {
  const { now } = o;
  const starts = [o.since, ...[...o.successes].filter((t) => t > o.since).sort((a, b) => a - b)];
  const gaps = new Map<number, Gap>();
  for (const [i, start] of starts.entries()) {
    const end = starts[i + 1] ?? null;
    gaps.set(start, { start, end, length: (end ?? now) - start });
  }
  // What the receiver got: each distinct delivery once, the silences and resolutions it carried (by the silence's start).
  const silent = new Map<number, number>();
  const resolved = new Map<number, { n: number; at: number[] }>();
  const seen = new Set<string>();
  for (const m of o.messages) {
    if (seen.has(m.deliveryId)) continue;
    seen.add(m.deliveryId);
    for (const a of m.alerts) {
      const start = Number(a.id.slice(a.id.lastIndexOf("@") + 1));
      if (a.event === "SCHEDULE_SILENT") silent.set(start, (silent.get(start) ?? 0) + 1);
      else if (a.event === "SCHEDULE_SILENT_RESOLVED") {
        const r = resolved.get(start) ?? { n: 0, at: [] };
        r.n++;
        r.at.push(Date.parse(a.at));
        resolved.set(start, r);
      }
    }
  }
  let expected = 0;
  let received = 0;
  let borderline = 0;
  const lostGaps: string[] = [];
  for (const g of gaps.values()) {
    if (g.length > SILENT_FOR_MS + SILENCE_TOLERANCE_MS) {
      expected++;
      if (silent.has(g.start)) received++;
      else lostGaps.push(`${new Date(g.start).toISOString()}+${Math.round(g.length / 1000)}s${g.end === null ? "(open)" : ""}`);
    } else if (g.length > SILENT_FOR_MS) borderline++;
  }
  const unexpected = [...silent.keys()].filter((s) => !((gaps.get(s)?.length ?? 0) > SILENT_FOR_MS)).length;
  // A received silence ended by a success at least silentFor + the tolerance before now must have its resolution.
  let resolvable = 0;
  let resolvedOk = 0;
  let resolvedWrong = 0;
  for (const s of silent.keys()) {
    const g = gaps.get(s);
    if (!g || g.end === null || g.end > now - SILENT_FOR_MS - SILENCE_TOLERANCE_MS) continue;
    resolvable++;
    const r = resolved.get(s);
    if (r && r.at.every((at) => at === g.end)) resolvedOk++;
  }
  for (const [s, r] of resolved) {
    const g = gaps.get(s);
    if (!silent.has(s) || !g || g.end === null || r.at.some((at) => at !== g.end)) resolvedWrong++;
  }
  return {
    expected,
    received,
    lost: expected - received,
    borderline,
    doubled: [...silent.values()].filter((n) => n > 1).length,
    unexpected,
    resolvable,
    resolved: resolvedOk,
    resolvedDoubled: [...resolved.values()].filter((r) => r.n > 1).length,
    resolvedWrong,
    lostGaps,
    deliveries: seen.size,
    requests: o.messages.length,
  };
}

export const silenceLine = (a: SilenceAccount): string =>
  `silence_alerts expected=${a.expected} received=${a.received} lost=${a.lost} doubled=${a.doubled} unexpected=${a.unexpected} borderline=${a.borderline} ` +
  `resolved=${a.resolved}/${a.resolvable} resolved_doubled=${a.resolvedDoubled} resolved_wrong=${a.resolvedWrong} deliveries=${a.deliveries} requests=${a.requests}` +
  (a.lostGaps.length ? ` lost_gaps=${a.lostGaps.join(",")}` : "");

/** What must not happen to silence alerts, as chaos.ts lists violations. */
export function silenceViolations(a: SilenceAccount): string[] {
  const out: string[] = [];
  if (a.expected === 0) out.push("the watched schedule was never silent long enough: the silence alerts were not exercised");
  if (a.lost > 0) out.push(`${a.lost} silence alerts lost`);
  if (a.doubled > 0) out.push(`${a.doubled} silence alerts received in two deliveries`);
  if (a.unexpected > 0) out.push(`${a.unexpected} silence alerts for gaps between successes no longer than silentFor`);
  if (a.resolved < a.resolvable) out.push(`${a.resolvable - a.resolved} ended silences without their resolution`);
  if (a.resolvedDoubled > 0) out.push(`${a.resolvedDoubled} silence resolutions received in two deliveries`);
  if (a.resolvedWrong > 0) out.push(`${a.resolvedWrong} silence resolutions for no silence received, or naming another success`);
  return out;
}
