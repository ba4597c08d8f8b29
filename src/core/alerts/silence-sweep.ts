/**
 * The reconciler's sweep for SCHEDULE_SILENT rules on all of a user's jobs (docs/alerts.md, "Silent
 * schedules"): it watches a recurring job or scheduled DAG of the rule's owner that has no watch
 * (a crash between the job's write and its watch's, a hook that failed, a rule over more schedules
 * than its request arms), and moves a watch whose due time no longer follows the rule's `silentFor`
 * (a change the request did not reach). Bounded: each pass reads at most `budget` of the owners'
 * recurring jobs (a page at a time, by owner then id, along the owner_id index) and one read of the
 * watches per page, and the next pass goes on from there; it starts over when every owner was read.
 */
import type { AlertRuleDoc } from "../../domain/index.js";
import { findSilences, recurringJobsOfOwner, type Mongo, type RecurringJob } from "../../store/index.js";
import { coversSchedule, jobCoverage, watchedOfJob, type WatchedSchedule } from "./silence-scope.js";

const PAGE = 500;
/** Sweeps under way, one per set of shards (the periodic pass's, a takeover's): at most this many kept. */
const MAX_CURSORS = 64;

export interface SweepPass {
  /** Whether this pass looks after the job's shard. */
  mine: (jobId: string) => boolean;
  /** Records and arms a watch (AlertSilences.watch): `from`, when the watch is new, is when its silence counts from at the earliest. */
  watch: (rule: AlertRuleDoc, target: WatchedSchedule, from?: Date) => Promise<void>;
  /** Jobs read per pass. */
  budget: number;
  /** Now (epoch ms): a cron's gaps are measured from it. */
  now: number;
}

export class SilenceSweep {
  /** Where the sweep of each set of shards goes on from: this owner's jobs after this id. */
  private readonly at = new Map<string, { ownerId: string; afterId: string }>();

  constructor(private readonly mongo: Mongo) {}

  /** One pass over `rules` (rules on all of their owner's schedules) for the shards named by `key`; how many watches it armed or moved. */
  async pass(key: string, rules: readonly AlertRuleDoc[], deps: SweepPass): Promise<number> {
    const byOwner = new Map<string, AlertRuleDoc[]>();
    for (const r of rules) byOwner.set(r.ownerId, [...(byOwner.get(r.ownerId) ?? []), r]);
    const owners = [...byOwner.keys()].sort();
    const from = this.at.get(key);
    this.at.delete(key);
    let i = from ? owners.findIndex((o) => o >= from.ownerId) : 0;
    if (i < 0) i = 0;
    let afterId = from && owners[i] === from.ownerId ? from.afterId : "";
    let budget = deps.budget;
    let armed = 0;
    for (; i < owners.length; i++, afterId = "") {
      const ownerId = owners[i]!;
      for (;;) {
        if (budget <= 0) {
          if (this.at.size >= MAX_CURSORS) this.at.clear();
          this.at.set(key, { ownerId, afterId });
          return armed;
        }
        const size = Math.min(PAGE, budget);
        const page = await recurringJobsOfOwner(this.mongo, ownerId, afterId, size);
        budget -= page.length;
        armed += await this.page(byOwner.get(ownerId)!, page, deps);
        if (page.length < size) break;
        afterId = page.at(-1)!._id;
      }
    }
    return armed;
  }

  /** The watches one page of an owner's recurring jobs is missing (or whose due time is off), armed. */
  private async page(rules: readonly AlertRuleDoc[], page: readonly RecurringJob[], deps: SweepPass): Promise<number> {
    const pairs = page.filter((j) => deps.mine(j._id)).flatMap((j) => rules.filter((r) => coversSchedule(r, jobCoverage(j), deps.now)).map((rule) => ({ rule, job: j, id: `${rule._id}|${j._id}` })));
    if (pairs.length === 0) return 0;
    const stored = new Map((await findSilences(this.mongo, pairs.map((p) => p.id))).map((d) => [d._id, d]));
    let armed = 0;
    for (const { rule, job, id } of pairs) {
      const doc = stored.get(id);
      // Recorded, and due when the rule says (a reported silence is looked at on its own clock).
      if (doc && (doc.reported || doc.dueAt.getTime() === doc.since.getTime() + rule.silentForMs!)) continue;
      const watched = await watchedOfJob(this.mongo, job);
      if (!watched || !coversSchedule(rule, watched, deps.now)) continue;
      await deps.watch(rule, watched, doc ? undefined : watched.changedAt);
      armed++;
    }
    return armed;
  }
}
