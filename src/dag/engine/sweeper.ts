/**
 * The sweeper (scheduler role): re-advances RUNNING DAG runs that have not been advanced for a
 * while, so a process killed between a task run's final write and its DAG run's advance loses
 * nothing (the advance is idempotent; nothing changes when nothing moved). Each sweeper takes the
 * DAG runs it looks at by compare-and-set on `sweepAt`, so several schedulers share the work.
 *
 * A DAG run looked at every `sweepAfterMs` gets a full round (its states and every task run read,
 * `step`) only if it moved since its last full sweep: it was written (a decision whose runs a
 * crash may have left uncreated) or one of its task runs ended (an advance that may have been
 * lost); one indexed query for the pass tells, and one write defers the rest. A DAG run where nothing moved, waiting on a long task or a retry
 * hours away, gets a full round every `idleFullEveryMs` only, and once nothing wrote it for
 * LONG_IDLE_MS it is looked at every IDLE_LOOK_EVERY_MS. Re-advancing each of them in full every
 * 5 s, 200 a pass, let one user's idle DAG runs (a task retried daily, 120 DAG runs a minute) take
 * the sweeper from everyone's within an hour (docs/security.md).
 */
import type { Clock } from "../../shared-state/index.js";
import { Periodic, type Logger } from "../../support/index.js";
import { deferDagRunSweeps, findDagRunsDueForSweep, takeDagRunForSweep, taskRunEndsSince, type DueDagRun, type Mongo } from "../../store/index.js";
import type { DagAdvancer } from "./advance.js";

export interface SweeperOptions {
  /** How often the sweeper looks. */
  everyMs: number;
  /** When a swept DAG run is looked at again if nothing writes it meanwhile. */
  sweepAfterMs: number;
  /** Most DAG runs looked at per pass. */
  batch: number;
  /** A DAG run where nothing moved still gets a full round this often. */
  idleFullEveryMs: number;
}

/** How far back a task run's end counts as after a sweep, against clocks that differ between hosts. */
const CLOCK_SKEW_MS = 10_000;
/** A DAG run nothing wrote for this long is looked at every IDLE_LOOK_EVERY_MS rather than every sweepAfterMs. */
const LONG_IDLE_MS = 10 * 60_000;
const IDLE_LOOK_EVERY_MS = 60_000;
/** A pass goes on taking due DAG runs, a batch at a time, for at most this long. */
const PASS_BUDGET_MS = 500;

export class DagSweeper {
  private readonly periodic: Periodic;

  constructor(
    private readonly deps: { mongo: Mongo; clock: Clock; log: Logger; advancer: DagAdvancer; repairLocks: () => Promise<void> },
    private readonly opts: SweeperOptions,
  ) {
    this.periodic = new Periodic(() => this.sweepOnce(), { everyMs: opts.everyMs, log: deps.log, failure: "DAG sweep failed; next pass retries" });
  }

  start(): void {
    this.periodic.start();
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** One pass: the DAG runs due for a look, those that moved advanced in a full round. Returns how many were. */
  async sweepOnce(): Promise<number> {
    const { clock } = this.deps;
    const started = clock();
    let advanced = 0;
    // Batches while DAG runs are due (idle ones cost one query a batch), within the pass's budget.
    for (;;) {
      const { looked, advanced: n } = await this.sweepBatch(clock());
      advanced += n;
      if (looked < this.opts.batch || clock() - started >= PASS_BUDGET_MS) break;
    }
    await this.deps.repairLocks();
    return advanced;
  }

  private async sweepBatch(now: number): Promise<{ looked: number; advanced: number }> {
    const { mongo, advancer } = this.deps;
    const next = new Date(now + this.opts.sweepAfterMs);
    const due = await findDagRunsDueForSweep(mongo, new Date(now), this.opts.batch);
    const { moved, idle } = await this.moved(due, now);
    // Idle a long time: looked at less often (an advance lost then is recovered within IDLE_LOOK_EVERY_MS).
    const long = (d: DueDagRun) => now - d.updatedAt.getTime() >= LONG_IDLE_MS;
    await deferDagRunSweeps(mongo, idle.filter((d) => !long(d)).map((d) => d._id), new Date(now), next);
    await deferDagRunSweeps(mongo, idle.filter(long).map((d) => d._id), new Date(now), new Date(now + Math.max(IDLE_LOOK_EVERY_MS, this.opts.sweepAfterMs)));
    let advanced = 0;
    for (const d of moved) {
      if (!(await takeDagRunForSweep(mongo, d, next, new Date(now)))) continue;
      await advancer.advance(d._id);
      advanced++;
    }
    return { looked: due.length, advanced };
  }

  /**
   * Which due DAG runs need a full round: written, or with a task run ended, since their last one
   * (less the clocks' skew), or whose last one was idleFullEveryMs ago; the others are idle.
   */
  private async moved(due: readonly DueDagRun[], now: number): Promise<{ moved: DueDagRun[]; idle: DueDagRun[] }> {
    const since = (d: DueDagRun) => (d.sweptAt ?? d.createdAt).getTime() - CLOCK_SKEW_MS;
    const moved: DueDagRun[] = [];
    const quiet: DueDagRun[] = [];
    for (const d of due) {
      if (now - (d.sweptAt ?? d.createdAt).getTime() >= this.opts.idleFullEveryMs || d.updatedAt.getTime() > since(d)) moved.push(d);
      else quiet.push(d);
    }
    if (quiet.length === 0) return { moved, idle: [] };
    const ends = await taskRunEndsSince(this.deps.mongo, quiet.map((d) => d._id), new Date(Math.min(...quiet.map(since))));
    const idle: DueDagRun[] = [];
    for (const d of quiet) ((ends.get(d._id)?.getTime() ?? -Infinity) > since(d) ? moved : idle).push(d);
    return { moved, idle };
  }
}
