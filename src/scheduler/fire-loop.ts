/**
 * The fire loop: sleeps until the earliest timer of the owned shards is due (or a wake-up notice
 * says an earlier one was armed), claims the due timers shard by shard, and hands each to its
 * handler: a job's fire (fire-job.ts), a run's retry, an alert rule's deadline on a slot, or its watch on a schedule's silence. A timer whose handling fails
 * (Redis erred during a failover, MongoDB did not answer) is put back into the wheel at the due
 * time it was claimed at by the next pass whose put-back Redis answers: at once after its first
 * failure, then after a wait that doubles with each failure in a row of the same timer (up to the
 * in-flight deadline, as before). Its deadline replay and the next owner's replay stay the safety
 * net. A replay is safe: the fire's run is unique by fireKey, the ledger insert-once.
 */
import type { Logger } from "../support/index.js";
import type { AlertDeadlines, AlertSilences, RunService } from "../core/index.js";
import { coerceError } from "../domain/index.js";
import type { JobDoc } from "../domain/index.js";
import { parseTimerId } from "../domain/index.js";
import type { Mongo } from "../store/index.js";
import { findJobsByIds } from "../store/index.js";
import type { JobFirer } from "./fire-job.js";
import type { ResolvedOptions } from "./options.js";
import { Channels, StaleEpochError, type Clock, type DueTimer, type SharedState, type ShardFence, type Unsubscribe } from "../shared-state/index.js";
import type { ShardOwnership } from "./shards.js";
import { Wakeup } from "../support/index.js";

/** Due timers handled per prefetch of their job documents (bounds how old a prefetched job can be). */
const PREFETCH_CHUNK = 1024;

/** Longest sleep of the loop while failed timers wait to be put back (Redis may answer again any moment). */
export const PUT_BACK_RETRY_MS = 100;

/** The wait before putting back a timer that failed `failures` times in a row: 0, then 500 ms doubling, up to `capMs`. */
export function putBackDelayMs(failures: number, capMs: number): number {
  if (failures <= 1) return 0;
  return Math.min(capMs, 500 * 2 ** Math.min(failures - 2, 20));
}

/** A claimed timer whose handling failed, waiting to be put back into the wheel. */
interface FailedTimer {
  fence: ShardFence;
  timer: DueTimer;
  /** Failures in a row of this timer (handlings that failed, with no success between). */
  failures: number;
  /** Not put back before this instant (the backoff of a timer that keeps failing). */
  notBefore: number;
}

export interface FireLoopDeps {
  mongo: Mongo;
  state: SharedState;
  runs: RunService;
  clock: Clock;
  log: Logger;
  shards: ShardOwnership;
  jobs: JobFirer;
  /** Alert deadlines (`d:` timers): the handler decides and records, the timer is then completed. */
  deadlines: Pick<AlertDeadlines, "handle">;
  /** SCHEDULE_SILENT watches (`s:` timers): the handler decides and records, and says when the timer is next due. */
  silences: Pick<AlertSilences, "handle">;
  options: ResolvedOptions;
  stopped: () => boolean;
}

export class FireLoop {
  private readonly wakeup = new Wakeup();
  private plannedWakeAt = Infinity;
  private done: Promise<void> = Promise.resolve();
  private unsubscribe: Unsubscribe | null = null;
  /** Timers whose handling failed, by `<shard> <id>`: put back by the next passes (see the file's comment). */
  private readonly failed = new Map<string, FailedTimer>();
  /**
   * Failures in a row per timer (`<shard> <id>`) and when the last was: the backoff of one that
   * keeps failing. Cleared by its next successful handling; forgotten after twice the in-flight
   * deadline without a failure (a timer disarmed meanwhile is never handled again).
   */
  private readonly streaks = new Map<string, { failures: number; at: number }>();

  constructor(private readonly deps: FireLoopDeps) {}

  /** Listens for wake-up notices of newly armed timers. */
  async listen(): Promise<void> {
    this.unsubscribe = await this.deps.state.bus.subscribe(Channels.wheelWake, (msg) => this.onWake(msg));
  }

  start(): void {
    this.done = this.loop();
  }

  /** Waits for the loop to end (once `stopped()` is true); call wake() first to cut its sleep short. */
  async finished(): Promise<void> {
    await this.done;
  }

  async unlisten(): Promise<void> {
    await this.unsubscribe?.();
  }

  wake(): void {
    this.wakeup.wake();
  }

  private onWake(msg: string): void {
    try {
      const { shard, dueAt } = JSON.parse(msg) as { shard: number; dueAt: number };
      if (this.deps.shards.has(shard) && dueAt < this.plannedWakeAt) this.wake();
    } catch {
      this.wake();
    }
  }

  private async loop(): Promise<void> {
    const { options: o, log } = this.deps;
    while (!this.deps.stopped()) {
      try {
        const busy = await this.pass();
        if (busy || this.deps.stopped()) continue;
        const shards = this.deps.shards.list();
        const earliest = shards.length ? await this.deps.state.wheel.earliest(shards) : null;
        const now = this.deps.clock();
        const cap = Math.min(o.maxSleepMs, this.putBackIn(now));
        const wait = earliest === null ? cap : Math.min(cap, Math.max(0, earliest - now));
        this.plannedWakeAt = now + wait;
        if (wait > 0) await this.wakeup.sleep(wait);
        this.plannedWakeAt = -Infinity;
      } catch (e) {
        log.error({ err: coerceError(e) }, "scheduler pass failed");
        // Timers waiting to be put back are tried again soon: Redis may be back within the second.
        await this.wakeup.sleep(Math.min(1_000, o.maxSleepMs, this.putBackIn(this.deps.clock())));
      }
    }
  }

  /** One pass over the owned shards; true when a batch came back full (more is due right now). */
  async pass(): Promise<boolean> {
    const { wheel } = this.deps.state;
    if (this.failed.size > 0) await this.putBackFailed(this.deps.clock());
    const shards = this.deps.shards.list();
    if (shards.length === 0) return false;
    const now = this.deps.clock();
    const earliest = await wheel.earliest(shards);
    if (earliest === null || earliest > now) {
      await this.replayExpired(now);
      return false;
    }
    const { full, work } = await this.claimDue(shards, now);
    // In chunks: the chunk's job documents are read with one query, just before they are used.
    for (let i = 0; i < work.length; i += PREFETCH_CHUNK) {
      const chunk = work.slice(i, i + PREFETCH_CHUNK);
      const jobs = await this.prefetchJobs(chunk.map((w) => w.timer.id));
      await forEachLimit(chunk, this.deps.options.concurrency, ({ fence, timer }) => this.handle(fence, timer, now, jobs));
    }
    return full;
  }

  /** Claims the due timers of every shard (parked in flight with a deadline). */
  private async claimDue(shards: readonly number[], now: number): Promise<{ full: boolean; work: Array<{ fence: ShardFence; timer: DueTimer }> }> {
    const { batch, inflightMs } = this.deps.options;
    let full = false;
    const work: Array<{ fence: ShardFence; timer: DueTimer }> = [];
    await Promise.all(
      shards.map(async (shard) => {
        const fence = this.deps.shards.fence(shard);
        try {
          const due = await this.deps.state.wheel.claimDue(fence, now, batch, inflightMs);
          if (due.length === batch) full = true;
          for (const timer of due) work.push({ fence, timer });
        } catch (e) {
          this.deps.shards.onShardError(fence, e);
        }
      }),
    );
    return { full, work };
  }

  /** The job documents behind job timers, by id (null: deleted); empty when the read fails. */
  private async prefetchJobs(timerIds: readonly string[]): Promise<Map<string, JobDoc | null>> {
    const ids = timerIds.flatMap((t) => {
      const ref = parseTimerId(t);
      return ref?.kind === "job" ? [ref.jobId] : [];
    });
    const byId = new Map<string, JobDoc | null>();
    if (ids.length < 2) return byId; // a lone timer reads its job itself
    try {
      for (const j of await findJobsByIds(this.deps.mongo, ids)) byId.set(j._id, j);
      for (const id of ids) if (!byId.has(id)) byId.set(id, null);
    } catch (e) {
      // Each handler then reads its own job (and fails, or not, on its own).
      this.deps.log.warn({ err: coerceError(e) }, "could not prefetch the jobs of a batch of timers");
      byId.clear();
    }
    return byId;
  }

  private async replayExpired(now: number): Promise<void> {
    for (const fence of this.deps.shards.fences()) {
      try {
        const n = await this.deps.state.wheel.replayInflight(fence, now, false);
        if (n > 0) this.deps.log.warn({ shard: fence.shard, timers: n }, "replayed in-flight timers past their deadline");
      } catch (e) {
        this.deps.shards.onShardError(fence, e);
      }
    }
  }

  /**
   * Puts the failed timers back into the wheel at the due time they were claimed at, so the next
   * claim fires them again (a replay: the run is unique by fireKey, the ledger insert-once). It is
   * `complete` re-arming at that due time, fenced like the owner's other writes, and it does
   * nothing to a timer no longer in flight (its handling's last write landed though its answer was
   * lost, or the API re-armed or disarmed it). A timer whose shard this scheduler no longer holds
   * under the same epoch is dropped: whoever acquired the shard put back everything in flight. One
   * whose put-back fails (Redis still away) is tried again at the next pass.
   */
  private async putBackFailed(now: number): Promise<void> {
    const ready = [...this.failed].filter(([, f]) => f.notBefore <= now);
    await Promise.all(
      ready.map(async ([key, { fence, timer }]) => {
        if (this.deps.shards.owned.get(fence.shard) !== fence.epoch) {
          this.failed.delete(key);
          return;
        }
        try {
          await this.deps.state.wheel.complete(fence, timer.id, timer.dueAt, now);
          this.failed.delete(key);
          this.deps.log.warn({ shard: fence.shard, timer: timer.id, lateMs: now - timer.dueAt }, "put a timer whose handling failed back into the wheel");
        } catch (e) {
          if (e instanceof StaleEpochError) {
            this.failed.delete(key);
            this.deps.shards.onShardError(fence, e);
          } else this.deps.log.warn({ err: coerceError(e), shard: fence.shard, timer: timer.id }, "could not put a failed timer back yet; trying again");
        }
      }),
    );
    for (const [key, streak] of this.streaks) if (now - streak.at > 2 * this.deps.options.inflightMs) this.streaks.delete(key);
  }

  /**
   * How long until a failed timer is due to be put back (Infinity: none waits): at least
   * PUT_BACK_RETRY_MS, so a put-back Redis refused is retried every 100 ms, while one that backs
   * off (a timer failing again and again) does not keep the loop polling the wheel meanwhile.
   */
  private putBackIn(now: number): number {
    let next = Infinity;
    for (const f of this.failed.values()) next = Math.min(next, f.notBefore);
    return next === Infinity ? Infinity : Math.max(PUT_BACK_RETRY_MS, next - now);
  }

  /** Records a failed handling: the timer is put back by the next passes (after its backoff). */
  private failedHandling(fence: ShardFence, timer: DueTimer): void {
    const key = `${fence.shard} ${timer.id}`;
    const now = this.deps.clock();
    const failures = (this.streaks.get(key)?.failures ?? 0) + 1;
    this.streaks.set(key, { failures, at: now });
    this.failed.set(key, { fence, timer, failures, notBefore: now + putBackDelayMs(failures, this.deps.options.inflightMs) });
  }

  private async handle(fence: ShardFence, timer: DueTimer, now: number, jobs?: ReadonlyMap<string, JobDoc | null>): Promise<void> {
    try {
      const ref = parseTimerId(timer.id);
      if (ref?.kind === "job") await this.deps.jobs.fire(fence, timer.id, ref.jobId, now, jobs);
      else if (ref?.kind === "run") await this.fireRetry(fence, timer.id, ref.runId);
      else if (ref?.kind === "deadline") {
        await this.deps.deadlines.handle(ref.ruleId, ref.fireKey);
        await this.deps.state.wheel.complete(fence, timer.id, null);
      } else if (ref?.kind === "silence") {
        const next = await this.deps.silences.handle(ref.ruleId, ref.jobId);
        await this.deps.state.wheel.complete(fence, timer.id, next);
      } else {
        this.deps.log.error({ timer: timer.id }, "unknown timer kind; dropping it");
        await this.deps.state.wheel.complete(fence, timer.id, null);
      }
      if (this.streaks.size > 0) {
        const key = `${fence.shard} ${timer.id}`;
        this.streaks.delete(key);
        this.failed.delete(key); // replayed by its deadline meanwhile, and handled: nothing to put back
      }
    } catch (e) {
      // Left in flight, and put back by the next pass that reaches Redis (failedHandling). A stale
      // epoch: the shard's new owner put it back on acquiring the shard.
      if (e instanceof StaleEpochError) this.deps.shards.onShardError(fence, e);
      else {
        this.deps.log.error({ err: coerceError(e), timer: timer.id }, "timer handling failed; it will be put back and fired again");
        this.failedHandling(fence, timer);
      }
    }
  }

  private async fireRetry(fence: ShardFence, timerId: string, runId: string): Promise<void> {
    await this.deps.runs.promoteRetry(runId);
    await this.deps.state.wheel.complete(fence, timerId, null);
  }
}

async function forEachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(workers);
}
