/**
 * SCHEDULE_SILENT (docs/alerts.md, "Silent schedules"): a recurring job or a scheduled DAG with no
 * successful run for `silentFor`, since its last success or since the watch began (the rule made, or
 * pointed at the schedule, or the job made after it). It catches a schedule that stopped without a
 * sound: paused by mistake, every run failing, nothing firing.
 *
 * A watch is a timer on the time wheel of the schedule's shard, `s:<ruleId>:<jobId>`, handled by the
 * shard's owner through the same fenced claim as fires, and recorded in `alertSilences` first:
 *   - armed when the rule is made or changed (the API), due `silentFor` after the watch's start;
 *     the reconciler arms a rule's watch that has no record (a crash before it was written) and
 *     re-arms every recorded one missing from the wheel (a Redis flush, a failover);
 *   - at the due time (plus a grace, KAIROS_ALERT_TIMER_GRACE, SILENCE_GRACE_MS by default: a run's
 *     end is written a moment after it is stamped)
 *     the handler looks for a success that ended since the last one it saw: found, the silence is
 *     counted from it and the timer moves to that success plus `silentFor`; none, the silence is
 *     reported once, as the firing `<ruleId>|silent:<jobId>@<start ms>`, and the timer then looks
 *     again for the success that ends it (at least once per `silentFor`, so a new silence after that
 *     success is still reported exactly `silentFor` after it);
 *   - a success that ends a silence whose firing was inserted sends SCHEDULE_SILENT_RESOLVED once, as
 *     the firing `<ruleId>|resolved:<jobId>@<start ms>` (inserted before the watch moves on, so a
 *     replay inserts it again, a duplicate); while a reported silence lasts, its timer looks every
 *     min(`silentFor`, RESOLVE_CHECK_MS), so the resolution follows the success within about that;
 *   - the timer is re-armed by the completion that ends its handling (one atomic step, fenced): a
 *     scheduler killed in between leaves it in flight, it is replayed, and the firing is a duplicate.
 * Successes are found when the timer comes due rather than pushed as they happen: a schedule that
 * succeeds every second costs one check per `silentFor`, not a write per run.
 */
import { AlertEvent, JobStatus, ScheduleKind, silenceTimerId, type AlertRuleDoc, type Schedule } from "../../domain/index.js";
import { shardOf, type Clock, type SharedState } from "../../shared-state/index.js";
import type { Logger } from "../../support/index.js";
import {
  allAlertRules,
  deleteSilence,
  ensureSilenceIndexes,
  findAlertRule,
  findDagHeader,
  findJob,
  findSilence,
  firingExists,
  firstSuccessAfter,
  insertFirings,
  lastDagSuccess,
  lastJobSuccess,
  recordSilence,
  silencesOfShards,
  updateSilence,
  type Mongo,
} from "../../store/index.js";
import { live, silenceFiring, silenceResolvedFiring } from "./match.js";

/**
 * How long after its due time a watch's timer is handled: a success stamped just in time is written
 * a moment later. The default of KAIROS_ALERT_TIMER_GRACE (AlertSettings.timerGraceMs).
 */
export const SILENCE_GRACE_MS = 5_000;
/**
 * A success is looked for back to this long before the previous check: a run's end is written after
 * it is stamped (batched, and an executor may report late), so one that ended just before a check
 * may be stored only after it.
 */
const WRITE_LAG_MS = 60_000;
/**
 * While a reported silence lasts its timer looks this often (or every `silentFor`, if shorter) for the
 * success that ends it, so the resolution is sent about this soon after the success: one indexed read
 * per minute per schedule that is silent now, none for the others.
 */
export const RESOLVE_CHECK_MS = 60_000;
const MAX_RULES = 100_000;
const MAX_WATCHES_PER_PASS = 10_000;

/** The schedule a watch is on, as read now (null: the job or DAG is gone). */
export interface WatchedSchedule {
  id: string;
  ownerId: string;
  name: string;
  dag: boolean;
  createdAt: Date;
  schedule: Schedule | null;
  /** Its schedule has no more slots (a job COMPLETED): no success is to be expected. */
  ended: boolean;
  paused: boolean;
}

/** The schedule a SCHEDULE_SILENT rule watches: its job, or its DAG (null: none, or the rule is not one). */
export const silenceTarget = (rule: Pick<AlertRuleDoc, "on" | "jobId" | "dagId" | "silentForMs">): { id: string; dag: boolean } | null =>
  rule.on.includes(AlertEvent.SCHEDULE_SILENT) && rule.silentForMs != null ? (rule.jobId !== null ? { id: rule.jobId, dag: false } : rule.dagId !== null ? { id: rule.dagId, dag: true } : null) : null;

const isRecurring = (s: Schedule | null): boolean => s !== null && (s.kind === ScheduleKind.INTERVAL || s.kind === ScheduleKind.CRON);

/** Reads the watched job or DAG (a scheduled DAG fires through its timer job, whose `_id` is the DAG's). */
export async function readWatchedSchedule(mongo: Mongo, target: { id: string; dag: boolean }): Promise<WatchedSchedule | null> {
  if (target.dag) {
    const d = await findDagHeader(mongo, target.id);
    if (!d) return null;
    const timer = d.schedule ? await findJob(mongo, target.id) : null;
    return { id: d._id, ownerId: d.ownerId, name: d.name, dag: true, createdAt: d.createdAt, schedule: d.schedule, ended: timer?.status === JobStatus.COMPLETED, paused: d.paused };
  }
  const j = await findJob(mongo, target.id);
  if (!j) return null;
  return { id: j._id, ownerId: j.ownerId, name: j.name, dag: false, createdAt: j.createdAt, schedule: j.schedule, ended: j.status === JobStatus.COMPLETED, paused: j.paused };
}

export class AlertSilences {
  private indexed: Promise<void> | null = null;
  /** How long after its due time a watch's timer is handled. */
  readonly graceMs: number;

  constructor(private readonly deps: { mongo: Mongo; state: SharedState; clock: Clock; log: Logger; graceMs?: number }) {
    this.graceMs = deps.graceMs ?? SILENCE_GRACE_MS;
  }

  /**
   * Records the watch of `rule` on `target` unless there is one, and arms its timer. A watch that
   * exists is kept (its silence goes on counting); a changed `silentFor` moves its due time.
   */
  async watch(rule: AlertRuleDoc, target: WatchedSchedule): Promise<void> {
    const n = rule.silentForMs;
    if (n == null) return;
    await (this.indexed ??= ensureSilenceIndexes(this.deps.mongo));
    const { wheel } = this.deps.state;
    const shard = shardOf(target.id, wheel.shardCount);
    const now = this.deps.clock();
    const since = new Date(Math.max(rule.updatedAt.getTime(), target.createdAt.getTime()));
    const doc = await recordSilence(this.deps.mongo, {
      _id: `${rule._id}|${target.id}`, ruleId: rule._id, ownerId: target.ownerId, jobId: target.id, dag: target.dag, name: target.name, shard,
      since, reported: false, alerted: false, checkedAt: since, dueAt: new Date(since.getTime() + n), createdAt: new Date(now),
    });
    let dueAt = doc.dueAt.getTime();
    if (!doc.reported && dueAt !== doc.since.getTime() + n) {
      dueAt = doc.since.getTime() + n;
      await updateSilence(this.deps.mongo, doc._id, { dueAt: new Date(dueAt) });
    }
    const id = silenceTimerId(rule._id, target.id);
    // One in flight is being handled (or will be replayed): arming it too would handle it twice.
    if (!(await wheel.isInflight(shard, id))) await wheel.arm(shard, id, dueAt + this.graceMs);
  }

  /**
   * Handles a due watch: a success since the last one moves the silence's start; a silence of
   * `silentFor` is reported once. Returns when the timer is next due (null: the watch is over, its
   * rule gone or no longer on this schedule). Idempotent: a replay finds the firing inserted.
   */
  async handle(ruleId: string, jobId: string): Promise<number | null> {
    const { mongo } = this.deps;
    const id = `${ruleId}|${jobId}`;
    const s = await findSilence(mongo, id);
    if (!s) return null;
    const rule = await findAlertRule(mongo, ruleId);
    const target = rule ? silenceTarget(rule) : null;
    if (!rule || !target || target.id !== jobId) {
      await deleteSilence(mongo, id);
      return null;
    }
    const n = rule.silentForMs!;
    const now = this.deps.clock();
    const after = new Date(Math.max(s.since.getTime(), s.checkedAt.getTime() - WRITE_LAG_MS));
    const last = s.dag ? await lastDagSuccess(mongo, jobId, after) : await lastJobSuccess(mongo, s.ownerId, jobId, after);
    let since = s.since;
    let reported = s.reported;
    let alerted = s.alerted ?? (s.reported && (await firingExists(mongo, silenceFiring(rule, { jobId, name: s.name, dag: s.dag, since, paused: false }, now)._id)));
    if (last !== null && last.getTime() > since.getTime()) {
      const first = (await firstSuccessAfter(mongo, s, since)) ?? last;
      if (!reported && first.getTime() >= since.getTime() + n) {
        // Looked at late (a scheduler down, a busy wheel): the silence reached silentFor and ended
        // before this check. It is told now, with its end, so a late timer never swallows one.
        const watched = await readWatchedSchedule(mongo, target);
        alerted = watched !== null && (await this.report(rule, s, watched, since, n, now));
        reported = true;
      }
      if (reported && alerted) {
        // The silence that was reported is over: said once, before the watch moves on (a replay
        // finds the same silence and inserts the same firing, a duplicate).
        if (live(rule, first, now)) await insertFirings(mongo, [silenceResolvedFiring(rule, { jobId, name: s.name, dag: s.dag, since, at: first }, now)]);
      }
      since = last;
      reported = false;
      alerted = false;
    }
    let dueAt = since.getTime() + n;
    if (now >= dueAt) {
      if (!reported) {
        const watched = await readWatchedSchedule(mongo, target);
        if (!watched) {
          await deleteSilence(mongo, id);
          return null;
        }
        alerted = await this.report(rule, s, watched, since, n, now);
        reported = true;
      }
      // Silent: looked at again for the success that ends it; soon when that success is to be told.
      dueAt = now + (alerted ? Math.min(n, RESOLVE_CHECK_MS) : n);
    }
    await updateSilence(mongo, id, { since, reported, alerted, checkedAt: new Date(now), dueAt: new Date(dueAt) });
    return dueAt + this.graceMs;
  }

  /** Reports the silence that began at `since` (once: insert-once firing); whether a message is to go out. */
  private async report(rule: AlertRuleDoc, s: { jobId: string; dag: boolean }, watched: WatchedSchedule, since: Date, n: number, now: number): Promise<boolean> {
    if (watched.ended || !isRecurring(watched.schedule) || !live(rule, new Date(since.getTime() + n), now)) return false;
    await insertFirings(this.deps.mongo, [silenceFiring(rule, { jobId: s.jobId, name: watched.name, dag: s.dag, since, paused: watched.paused }, now)]);
    return true;
  }

  /**
   * For the reconciler: watches the SCHEDULE_SILENT rules of `shards` that have none (a crash between
   * a rule's write and its watch's), and re-arms the recorded watches missing from the wheel; how many.
   */
  async rearm(shards: readonly number[], missing: (shard: number, timerId: string) => Promise<boolean>): Promise<number> {
    if (shards.length === 0) return 0;
    const { mongo, state } = this.deps;
    const owned = new Set(shards);
    let armed = 0;
    for (const rule of await allAlertRules(mongo, MAX_RULES)) {
      const target = silenceTarget(rule);
      if (!target || !owned.has(shardOf(target.id, state.wheel.shardCount))) continue;
      if (await findSilence(mongo, `${rule._id}|${target.id}`)) continue;
      const watched = await readWatchedSchedule(mongo, target);
      if (!watched) continue;
      await this.watch(rule, watched);
      armed++;
    }
    for (const s of await silencesOfShards(mongo, shards, MAX_WATCHES_PER_PASS)) {
      const id = silenceTimerId(s.ruleId, s.jobId);
      if (!(await missing(s.shard, id))) continue;
      await state.wheel.arm(s.shard, id, s.dueAt.getTime() + this.graceMs);
      armed++;
    }
    return armed;
  }
}
