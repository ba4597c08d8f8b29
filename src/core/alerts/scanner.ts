/**
 * The alert engine's sources (docs/alerts.md, "Where alerts are found"): one pass reads what
 * happened since the last and inserts one firing per (rule, subject). Runs that ended badly and
 * ledger entries of slots without a run are read by when they were recorded, from cursors kept in
 * MongoDB and moved only after the firings are written (a crash re-reads, and the firing ids make
 * the re-read harmless); the read stops `lagMs` short of now, so a write batched with an earlier
 * timestamp lands before its instant is read. DEAD nodes, late queued runs and failure rates are
 * states, read each pass (rates on their own period).
 */
import { AlertEvent, ALERT_RUN_EVENTS, FireOutcome, RunStatus, type AlertFiringDoc, type AlertRuleDoc } from "../../domain/index.js";
import {
  clearFailing,
  deadNodesSince,
  failingJobs,
  finishedCounts,
  firesRecordedBetween,
  insertFirings,
  lateQueuedRuns,
  markFailing,
  readAlertCursor,
  runsEndedBetween,
  successAfter,
  writeAlertCursor,
  type AlertScope,
  type Mongo,
} from "../../store/index.js";
import { fireFiring, inScope, latenessFiring, live, nodeFiring, rateFiring, recoveredFiring, runFiring } from "./match.js";

/** Rows read per scan query. */
const SCAN_LIMIT = 1_000;
/** How far back a scan that never ran starts. */
const FIRST_SCAN_MS = 60_000;
/** A node lost longer ago than this is not reported to a rule made since. */
const NODE_LOOKBACK_MS = 3600_000;
const BAD_RUNS = [RunStatus.FAILED, RunStatus.DEAD, RunStatus.TIMED_OUT] as const;
const NO_RUN = [FireOutcome.MISSED, FireOutcome.SKIPPED_OVERLAP, FireOutcome.SKIPPED_PAUSED, FireOutcome.SKIPPED_DST, FireOutcome.SKIPPED_BACKLOG] as const;

export interface ScannerOptions {
  /** How far behind now the cursors read. */
  lagMs: number;
}

export class AlertScanner {
  /** When each FAILURE_RATE rule was last evaluated. */
  private rateAt = new Map<string, number>();

  constructor(private readonly deps: { mongo: Mongo; options: ScannerOptions }) {}

  /** One pass at `now` over `rules`; the firings that were new. */
  async pass(rules: readonly AlertRuleDoc[], now: number): Promise<AlertFiringDoc[]> {
    const on = (e: AlertEvent) => rules.filter((r) => r.on.includes(e));
    const runRules = rules.filter((r) => r.on.some((e) => (ALERT_RUN_EVENTS as readonly string[]).includes(e) || e === AlertEvent.RECOVERED));
    const fireRules = rules.filter((r) => r.on.includes(AlertEvent.FIRE_MISSED) || r.on.includes(AlertEvent.FIRE_SKIPPED));
    const made: AlertFiringDoc[] = [];
    made.push(...(await this.endedRuns(runRules, now)));
    made.push(...(await this.recovered(on(AlertEvent.RECOVERED), now)));
    made.push(...(await this.fires(fireRules, now)));
    made.push(...(await this.nodes(on(AlertEvent.NODE_LOST), now)));
    made.push(...(await this.lateness(on(AlertEvent.QUEUE_LATENESS), now)));
    made.push(...(await this.rates(on(AlertEvent.FAILURE_RATE), now)));
    return made;
  }

  /** Reads (cursor, now - lag] with `read`, makes firings with `fire`, writes them, then moves the cursor. */
  private async scan<T>(name: string, rules: readonly AlertRuleDoc[], now: number, read: (from: Date, to: Date) => Promise<T[]>, at: (t: T) => Date, fire: (t: T) => Promise<AlertFiringDoc[]>): Promise<AlertFiringDoc[]> {
    const to = new Date(now - this.deps.options.lagMs);
    if (rules.length === 0) return [];
    // Nothing recorded before the oldest rule was made can fire it: a cursor left far behind (no
    // rule for a while) starts there instead.
    const oldest = Math.min(...rules.map((r) => r.createdAt.getTime()));
    const cursor = (await readAlertCursor(this.deps.mongo, name)) ?? new Date(to.getTime() - FIRST_SCAN_MS);
    const from = new Date(Math.max(cursor.getTime(), oldest - 1));
    if (from >= to) return [];
    const rows = await read(from, to);
    const firings: AlertFiringDoc[] = [];
    for (const row of rows) firings.push(...(await fire(row)));
    const made = await insertFirings(this.deps.mongo, firings);
    // A full batch stops where it got to (its last instant is read again next time: duplicates are harmless).
    const next = rows.length >= SCAN_LIMIT ? new Date(at(rows.at(-1)!).getTime() - 1) : to;
    await writeAlertCursor(this.deps.mongo, name, next > from ? next : to);
    return made;
  }

  private endedRuns(rules: readonly AlertRuleDoc[], now: number): Promise<AlertFiringDoc[]> {
    const recovering = rules.filter((r) => r.on.includes(AlertEvent.RECOVERED));
    return this.scan(
      "runs",
      rules,
      now,
      (from, to) => runsEndedBetween(this.deps.mongo, BAD_RUNS, from, to, SCAN_LIMIT),
      (run) => run.finishedAt!,
      async (run) => {
        for (const r of recovering) if (inScope(r, run.ownerId, run.jobId)) await markFailing(this.deps.mongo, r._id, run.jobId, run.finishedAt!);
        return rules.flatMap((r) => runFiring(r, run, now) ?? []);
      },
    );
  }

  private async recovered(rules: readonly AlertRuleDoc[], now: number): Promise<AlertFiringDoc[]> {
    if (rules.length === 0) return [];
    const byId = new Map(rules.map((r) => [r._id, r]));
    const firings: AlertFiringDoc[] = [];
    const cleared: Array<{ id: string; failedAt: Date }> = [];
    for (const s of await failingJobs(this.deps.mongo, [...byId.keys()], SCAN_LIMIT)) {
      const ok = await successAfter(this.deps.mongo, s.jobId, s.failedAt);
      if (!ok || ok.finishedAt!.getTime() > now - this.deps.options.lagMs) continue;
      const rule = byId.get(s.ruleId)!;
      if (live(rule, ok.finishedAt!, now)) firings.push(recoveredFiring(rule, ok, now));
      cleared.push({ id: s._id, failedAt: s.failedAt });
    }
    const made = await insertFirings(this.deps.mongo, firings);
    for (const c of cleared) await clearFailing(this.deps.mongo, c.id, c.failedAt);
    return made;
  }

  private fires(rules: readonly AlertRuleDoc[], now: number): Promise<AlertFiringDoc[]> {
    return this.scan(
      "fires",
      rules,
      now,
      (from, to) => firesRecordedBetween(this.deps.mongo, NO_RUN, from, to, SCAN_LIMIT),
      (f) => f.recordedAt,
      async (f) => rules.flatMap((r) => fireFiring(r, f, now) ?? []),
    );
  }

  private async nodes(rules: readonly AlertRuleDoc[], now: number): Promise<AlertFiringDoc[]> {
    if (rules.length === 0) return [];
    const dead = await deadNodesSince(this.deps.mongo, new Date(now - NODE_LOOKBACK_MS), SCAN_LIMIT);
    return insertFirings(this.deps.mongo, rules.flatMap((r) => dead.filter((n) => live(r, n.lastHeartbeatAt, now)).map((n) => nodeFiring(r, n, now))));
  }

  private async lateness(rules: readonly AlertRuleDoc[], now: number): Promise<AlertFiringDoc[]> {
    const firings: AlertFiringDoc[] = [];
    for (const r of rules) {
      if (!live(r, new Date(now), now)) continue;
      for (const run of await lateQueuedRuns(this.deps.mongo, scopeOf(r), new Date(now - r.queueLatenessMs!), 100)) firings.push(latenessFiring(r, run, now));
    }
    return insertFirings(this.deps.mongo, firings);
  }

  private async rates(rules: readonly AlertRuleDoc[], now: number): Promise<AlertFiringDoc[]> {
    const firings: AlertFiringDoc[] = [];
    for (const r of rules) {
      const w = r.failureRate!;
      const every = Math.max(10_000, w.windowMs / 10);
      if (now - (this.rateAt.get(r._id) ?? 0) < every || !live(r, new Date(now), now)) continue;
      this.rateAt.set(r._id, now);
      const counts = await finishedCounts(this.deps.mongo, scopeOf(r), new Date(now - w.windowMs), new Date(now));
      if (counts.total >= w.minRuns && counts.failed / counts.total >= w.threshold) firings.push(rateFiring(r, counts, now));
    }
    if (this.rateAt.size > 10 * rules.length + 100) this.rateAt = new Map([...this.rateAt].filter(([id]) => rules.some((r) => r._id === id)));
    return insertFirings(this.deps.mongo, firings);
  }
}

function scopeOf(r: AlertRuleDoc): AlertScope {
  if (r.cluster) return { ownerId: null, jobId: null };
  return { ownerId: r.ownerId, jobId: r.jobId ?? r.dagId };
}
