/**
 * The fire loop: sleeps until the earliest timer of the owned shards is due (or a wake-up notice
 * says an earlier one was armed), claims the due timers shard by shard, and hands each to its
 * handler: a job's fire (fire-job.ts), a run's retry, an alert rule's deadline on a slot, or its watch on a schedule's silence. A timer whose handling fails stays in
 * flight and is replayed after its deadline.
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
        const wait = earliest === null ? o.maxSleepMs : Math.min(o.maxSleepMs, Math.max(0, earliest - now));
        this.plannedWakeAt = now + wait;
        if (wait > 0) await this.wakeup.sleep(wait);
        this.plannedWakeAt = -Infinity;
      } catch (e) {
        log.error({ err: coerceError(e) }, "scheduler pass failed");
        await this.wakeup.sleep(Math.min(1_000, o.maxSleepMs));
      }
    }
  }

  /** One pass over the owned shards; true when a batch came back full (more is due right now). */
  async pass(): Promise<boolean> {
    const { wheel } = this.deps.state;
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
    } catch (e) {
      // Left in flight on purpose: it is replayed after its deadline.
      if (e instanceof StaleEpochError) this.deps.shards.onShardError(fence, e);
      else this.deps.log.error({ err: coerceError(e), timer: timer.id }, "timer handling failed; it will be replayed");
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
