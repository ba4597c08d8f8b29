/**
 * SCHEDULE_SILENT (docs/alerts.md, "Silent schedules"): a recurring job or a scheduled DAG with no
 * successful run for `silentFor`, since its last success or since the watch began (the rule made, or
 * pointed at the schedule, or the job made after it). It catches a schedule that stopped without a
 * sound: paused by mistake, every run failing, nothing firing.
 *
 * A rule watches one schedule, or each recurring one of its owner (silence-scope.ts). A watch is a
 * timer on the time wheel of the schedule's shard, `s:<ruleId>:<jobId>`, handled by the shard's owner
 * through the same fenced claim as fires, and recorded in `alertSilences` first:
 *   - armed when the rule is made or changed (the API), due `silentFor` after the watch's start,
 *     and, for a rule on all of its owner's schedules, as a recurring job is made (the job service
 *     tells watchJob); the reconciler arms a watch that has no record (a crash before it was
 *     written; silence-sweep.ts for the rules on all schedules) and re-arms the recorded ones
 *     missing from the wheel (a Redis flush, a failover), a bounded page per pass;
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
import { silenceTimerId, type AlertRuleDoc, type JobDoc } from "../../domain/index.js";
import { shardOf, type Clock, type SharedState } from "../../shared-state/index.js";
import type { Logger } from "../../support/index.js";
import {
  allAlertRules,
  allJobsSilenceRules,
  deleteSilence,
  deleteSilences,
  ensureSilenceIndexes,
  findAlertRule,
  findSilence,
  findSilences,
  firingExists,
  firstSuccessAfter,
  insertFirings,
  lastDagSuccess,
  lastJobSuccess,
  recordSilence,
  recurringJobsOfOwner,
  silenceRuleIdsOfOwner,
  silencesOfRule,
  silencesOfShards,
  updateSilence,
  type AlertSilenceDoc,
  type Mongo,
} from "../../store/index.js";
import { live, silenceFiring, silenceResolvedFiring } from "./match.js";
import { coversSchedule, isRecurring, readWatchedSchedule, silenceScope, silenceTarget, watchedOfJob, type WatchedSchedule } from "./silence-scope.js";
import { SilenceSweep } from "./silence-sweep.js";

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
/** Recorded watches the reconciler looks at per pass (on from where the last pass stopped), and recurring jobs its sweep reads. */
const MAX_WATCHES_PER_PASS = 10_000;
/** Passes under way, one per set of shards (the periodic pass's, a takeover's): at most this many cursors kept. */
const MAX_CURSORS = 64;
/**
 * Schedules a rule on all of a user's jobs watches as it is made or changed, in that request (the
 * first by id); the reconciler's sweep watches the others within its next passes.
 */
export const WATCHES_PER_REQUEST = 1_000;
/** Jobs read per page while arming a rule's watches. */
const PAGE = 200;

export class AlertSilences {
  private indexed: Promise<void> | null = null;
  private readonly sweep: SilenceSweep;
  /** Where the re-arm of each set of shards' recorded watches goes on from (an id; absent: the first). */
  private readonly rearmAt = new Map<string, string>();
  /** How long after its due time a watch's timer is handled. */
  readonly graceMs: number;

  constructor(private readonly deps: { mongo: Mongo; state: SharedState; clock: Clock; log: Logger; graceMs?: number }) {
    this.graceMs = deps.graceMs ?? SILENCE_GRACE_MS;
    this.sweep = new SilenceSweep(deps.mongo);
  }

  /**
   * Records the watch of `rule` on `target` unless there is one, and arms its timer. A watch that
   * exists is kept (its silence goes on counting); a changed `silentFor` moves its due time. A new
   * watch's silence counts from the rule's last change, or from `from` (by default the schedule's
   * creation) when that is later.
   */
  async watch(rule: AlertRuleDoc, target: WatchedSchedule, from: Date = target.createdAt): Promise<void> {
    const n = rule.silentForMs;
    if (n == null) return;
    await (this.indexed ??= ensureSilenceIndexes(this.deps.mongo));
    const { wheel } = this.deps.state;
    const shard = shardOf(target.id, wheel.shardCount);
    const now = this.deps.clock();
    const since = new Date(Math.max(rule.updatedAt.getTime(), from.getTime()));
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
   * A rule on all of its owner's schedules, made or changed: watches each recurring job and
   * scheduled DAG of the owner it covers, the first `limit` by id (the reconciler's sweep watches
   * any others); how many it looked at.
   */
  async watchAll(rule: AlertRuleDoc, limit = WATCHES_PER_REQUEST): Promise<number> {
    const { mongo } = this.deps;
    let afterId = "";
    let seen = 0;
    while (seen < limit) {
      const size = Math.min(PAGE, limit - seen);
      const page = await recurringJobsOfOwner(mongo, rule.ownerId, afterId, size);
      for (const j of page) {
        const watched = await watchedOfJob(mongo, j);
        if (watched && coversSchedule(rule, watched, this.deps.clock())) await this.watch(rule, watched);
      }
      seen += page.length;
      if (page.length < size) break;
      afterId = page.at(-1)!._id;
    }
    return seen;
  }

  /**
   * A job stored with a recurring schedule (made so, or changed to one; a DAG's timer job: its DAG):
   * the owner's rules on all of their schedules watch it, their silence counting from now. Jobs and
   * DAGs call it after their write; a watch it did not write (a crash, a failure) is armed by the
   * reconciler's sweep.
   */
  async watchJob(job: Pick<JobDoc, "_id" | "ownerId" | "name" | "dagId" | "schedule" | "status" | "paused" | "createdAt" | "updatedAt">): Promise<void> {
    if (!isRecurring(job.schedule)) return;
    const { mongo } = this.deps;
    const rules = (await allJobsSilenceRules(mongo, job.ownerId, MAX_RULES)).filter((r) => silenceScope(r)?.all === true);
    if (rules.length === 0) return;
    const watched = await watchedOfJob(mongo, job);
    if (!watched) return;
    const from = new Date(this.deps.clock());
    for (const rule of rules) if (coversSchedule(rule, watched, from.getTime())) await this.watch(rule, watched, from);
  }

  /**
   * A job deleted: the watches of its owner's rules on it end now (a DAG's timer job: its DAG's
   * watches are read at their check, as the DAG may keep its watches), not at their next check,
   * `silentFor` later: a user making and deleting jobs would pile them up meanwhile.
   */
  async unwatchJob(job: Pick<JobDoc, "_id" | "ownerId" | "dagId">): Promise<void> {
    if (job.dagId) return;
    const ruleIds = await silenceRuleIdsOfOwner(this.deps.mongo, job.ownerId, MAX_RULES);
    if (ruleIds.length > 0) await this.end(await findSilences(this.deps.mongo, ruleIds.map((r) => `${r}|${job._id}`)));
  }

  /**
   * Ends the watches of a rule deleted, or changed so that it no longer watches them (`keep`: the
   * schedules it still watches): their records first, so no check or re-arm brings one back, then
   * their timers. The first `limit` of them in this call (the request's bound); the reconciler ends
   * the others, as it finds them on its pass over the recorded watches. How many it ended.
   */
  async forget(ruleId: string, keep: (s: Pick<AlertSilenceDoc, "jobId" | "dag">) => boolean = () => false, limit = WATCHES_PER_REQUEST): Promise<number> {
    let afterId = "";
    let ended = 0;
    while (ended < limit) {
      const page = await silencesOfRule(this.deps.mongo, ruleId, afterId, Math.min(PAGE, limit - ended));
      if (page.length === 0) break;
      afterId = page.at(-1)!._id;
      ended += await this.end(page.filter((s) => !keep(s)));
    }
    return ended;
  }

  /** Deletes these watches' records, then disarms their timers (one in flight finds no record and ends). */
  private async end(gone: readonly AlertSilenceDoc[]): Promise<number> {
    if (gone.length === 0) return 0;
    await deleteSilences(this.deps.mongo, gone.map((s) => s._id));
    const { wheel } = this.deps.state;
    await Promise.all(gone.map((s) => wheel.disarm(s.shard, silenceTimerId(s.ruleId, s.jobId))));
    return gone.length;
  }

  /**
   * Handles a due watch: a success since the last one moves the silence's start; a silence of
   * `silentFor` is reported once. Returns when the timer is next due (null: the watch is over: its
   * rule gone or no longer on this schedule, the schedule deleted, or, for a rule on all of its
   * owner's schedules, no longer one it covers). Idempotent: a replay finds the firing inserted.
   */
  async handle(ruleId: string, jobId: string): Promise<number | null> {
    const { mongo } = this.deps;
    const id = `${ruleId}|${jobId}`;
    const s = await findSilence(mongo, id);
    if (!s) return null;
    const rule = await findAlertRule(mongo, ruleId);
    const scope = rule ? silenceScope(rule) : null;
    const named = scope !== null && (scope.all || (scope.id === jobId && scope.dag === s.dag));
    const watched = named ? await readWatchedSchedule(mongo, { id: jobId, dag: s.dag }) : null;
    if (!rule || !scope || !watched || (scope.all && !coversSchedule(rule, watched, this.deps.clock()))) {
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
        alerted = await this.report(rule, s, watched, since, n, now);
        reported = true;
      }
      if (reported && alerted) {
        // The silence that was reported is over: said once, before the watch moves on (a replay
        // finds the same silence and inserts the same firing, a duplicate).
        if (live(rule, first, now)) await insertFirings(mongo, [silenceResolvedFiring(rule, { jobId, name: watched.name, dag: s.dag, since, at: first }, now)]);
      }
      since = last;
      reported = false;
      alerted = false;
    }
    let dueAt = since.getTime() + n;
    if (now >= dueAt) {
      if (!reported) {
        alerted = await this.report(rule, s, watched, since, n, now);
        reported = true;
      }
      // Silent: looked at again for the success that ends it; soon when that success is to be told.
      dueAt = now + (alerted ? Math.min(n, RESOLVE_CHECK_MS) : n);
    }
    // The schedule's name as it is now (renamed since it was watched), for the record's readers.
    await updateSilence(mongo, id, { since, reported, alerted, checkedAt: new Date(now), dueAt: new Date(dueAt), ...(watched.name !== s.name ? { name: watched.name } : {}) });
    return dueAt + this.graceMs;
  }

  /** Reports the silence that began at `since` (once: insert-once firing); whether a message is to go out. */
  private async report(rule: AlertRuleDoc, s: { jobId: string; dag: boolean }, watched: WatchedSchedule, since: Date, n: number, now: number): Promise<boolean> {
    if (watched.ended || !isRecurring(watched.schedule) || !live(rule, new Date(since.getTime() + n), now)) return false;
    await insertFirings(this.deps.mongo, [silenceFiring(rule, { jobId: s.jobId, name: watched.name, dag: s.dag, since, paused: watched.paused }, now)]);
    return true;
  }

  /**
   * For the reconciler, over `shards`: watches the schedule a SCHEDULE_SILENT rule names that has no
   * watch (a crash between a rule's write and its watch's); sweeps a bounded part of the schedules
   * of the rules on all of their owner's (silence-sweep.ts); and re-arms the recorded watches
   * missing from the wheel, MAX_WATCHES_PER_PASS of them per pass, on from where the last pass
   * stopped, ending those whose rule is gone or no longer watches their schedule (what a rule's
   * deletion or change left past its request's bound, a user's deletion, a crash). How many it armed.
   */
  async rearm(shards: readonly number[], missing: (shard: number, timerId: string) => Promise<boolean>): Promise<number> {
    if (shards.length === 0) return 0;
    const { mongo, state } = this.deps;
    const owned = new Set(shards);
    const mine = (id: string) => owned.has(shardOf(id, state.wheel.shardCount));
    let armed = 0;
    const rules = await allAlertRules(mongo, MAX_RULES);
    for (const rule of rules) {
      const target = silenceTarget(rule);
      if (!target || !mine(target.id)) continue;
      if (await findSilence(mongo, `${rule._id}|${target.id}`)) continue;
      const watched = await readWatchedSchedule(mongo, target);
      if (!watched) continue;
      await this.watch(rule, watched);
      armed++;
    }
    const key = [...shards].sort((a, b) => a - b).join(",");
    const all = rules.filter((r) => silenceScope(r)?.all === true);
    armed += await this.sweep.pass(key, all, { mine, budget: MAX_WATCHES_PER_PASS, now: this.deps.clock(), watch: (rule, target, from) => this.watch(rule, target, from) });
    const afterId = this.rearmAt.get(key) ?? "";
    const page = await silencesOfShards(mongo, shards, afterId, MAX_WATCHES_PER_PASS);
    this.rearmAt.delete(key);
    if (page.length === MAX_WATCHES_PER_PASS) {
      if (this.rearmAt.size >= MAX_CURSORS) this.rearmAt.clear();
      this.rearmAt.set(key, page.at(-1)!._id);
    }
    // A watch its rule no longer has (the rule deleted, its owner too, or changed past what its
    // request ended) is ended rather than re-armed.
    const byId = new Map<string, AlertRuleDoc | null>(rules.map((r) => [r._id, r]));
    const orphan = (s: AlertSilenceDoc) => {
      const rule = byId.get(s.ruleId);
      const scope = rule ? silenceScope(rule) : null;
      return !scope || (!scope.all && (scope.id !== s.jobId || scope.dag !== s.dag));
    };
    // Read again before ending any: a rule made or changed since the pass read them.
    for (const ruleId of new Set(page.filter(orphan).map((s) => s.ruleId))) byId.set(ruleId, await findAlertRule(mongo, ruleId));
    await this.end(page.filter(orphan));
    for (const s of page.filter((x) => !orphan(x))) {
      const id = silenceTimerId(s.ruleId, s.jobId);
      if (!(await missing(s.shard, id))) continue;
      await state.wheel.arm(s.shard, id, s.dueAt.getTime() + this.graceMs);
      armed++;
    }
    return armed;
  }
}
