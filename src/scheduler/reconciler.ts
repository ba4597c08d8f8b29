/**
 * Rebuilds the wheel of the given shards from MongoDB: jobs with a next fire, retries that
 * are waiting, alert deadlines still armed and silence watches get their timer back if it is missing (after a Redis flush, a failover, or a crash
 * between writing a job and arming it). MongoDB is the source of truth.
 */
import type { Logger } from "../support/index.js";
import type { AlertDeadlines, AlertSilences } from "../core/index.js";
import { jobTimerId, retryTimerId, type TimerId } from "../domain/index.js";
import { findStillScheduled, scheduledJobs } from "../store/index.js";
import type { Mongo } from "../store/index.js";
import { waitingRetries } from "../store/index.js";
import { shardOf, type Clock, type SharedState } from "../shared-state/index.js";
import type { ShardOwnership } from "./shards.js";
import { timerDueAt } from "../timing/index.js";

export interface ReconcilerDeps {
  mongo: Mongo;
  state: SharedState;
  clock: Clock;
  log: Logger;
  shards: Pick<ShardOwnership, "has">;
  stageAheadMs: number;
  /** Alert deadlines still ARMED in MongoDB (core/alerts/deadlines.ts). */
  deadlines: Pick<AlertDeadlines, "rearm">;
  /** SCHEDULE_SILENT watches (core/alerts/silences.ts): recorded ones missing from the wheel, rules missing their watch. */
  silences: Pick<AlertSilences, "rearm">;
}

export class Reconciler {
  constructor(private readonly deps: ReconcilerDeps) {}

  /** Re-arms the missing timers of `shards` (those this scheduler still owns); returns how many. */
  async reconcile(shards: readonly number[]): Promise<number> {
    if (shards.length === 0) return 0;
    const wanted = new Set(shards);
    const mine = (shard: number) => wanted.has(shard) && this.deps.shards.has(shard);
    const owned = shards.filter(mine);
    const armed = (await this.rearmJobs(mine)) + (await this.rearmRetries(mine)) + (await this.deps.deadlines.rearm(owned, (shard, id) => this.missing(shard, id))) +
      (await this.deps.silences.rearm(owned, (shard, id) => this.missing(shard, id)));
    if (armed > 0) this.deps.log.warn({ armed, shards: shards.length }, "re-armed timers missing from the wheel");
    return armed;
  }

  /** Neither armed nor in flight: a timer in flight is being handled (or will be replayed), and re-arming it would fire it twice. */
  private async missing(shard: number, id: TimerId): Promise<boolean> {
    const { wheel } = this.deps.state;
    return (await wheel.dueAt(shard, id)) === null && !(await wheel.isInflight(shard, id));
  }

  private async rearmJobs(mine: (shard: number) => boolean): Promise<number> {
    const { wheel } = this.deps.state;
    let armed = 0;
    for await (const j of scheduledJobs(this.deps.mongo)) {
      const shard = shardOf(j._id, wheel.shardCount);
      if (!mine(shard)) continue;
      const id = jobTimerId(j._id);
      if (!(await this.missing(shard, id))) continue;
      // The cursor read `j` a while ago: the loop may have fired the job and re-armed (or, for a
      // finished one-off, dropped) its timer since. Only a job still due at that time whose timer
      // is still missing is re-armed.
      const current = await findStillScheduled(this.deps.mongo, j._id, j.nextFireAt);
      if (!current || !(await this.missing(shard, id))) continue;
      await wheel.arm(shard, id, timerDueAt(current, current.nextFireAt!.getTime(), this.deps.stageAheadMs));
      armed++;
    }
    return armed;
  }

  private async rearmRetries(mine: (shard: number) => boolean): Promise<number> {
    const { wheel } = this.deps.state;
    let armed = 0;
    for await (const r of waitingRetries(this.deps.mongo)) {
      const shard = shardOf(r.jobId, wheel.shardCount);
      if (!mine(shard)) continue;
      const id = retryTimerId(r._id);
      if (await this.missing(shard, id)) {
        await wheel.arm(shard, id, r.retryAt?.getTime() ?? this.deps.clock());
        armed++;
      }
    }
    return armed;
  }
}
