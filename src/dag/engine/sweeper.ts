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
 * the sweeper from everyone's within an hour (docs/security.md). The rule is pure: sweep-rule.ts.
 */
import type { Clock } from "../../shared-state/index.js";
import { Periodic, type Logger } from "../../support/index.js";
import { deferDagRunSweeps, findDagRunsDueForSweep, takeDagRunForSweep, taskRunEndsSince, type Mongo } from "../../store/index.js";
import type { DagAdvancer } from "./advance.js";
import { anotherBatch, planSweep, splitByWrites } from "./sweep-rule.js";

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
      if (!anotherBatch(looked, this.opts.batch, clock() - started)) break;
    }
    await this.deps.repairLocks();
    return advanced;
  }

  private async sweepBatch(now: number): Promise<{ looked: number; advanced: number }> {
    const { mongo, advancer } = this.deps;
    const due = await findDagRunsDueForSweep(mongo, new Date(now), this.opts.batch);
    const split = splitByWrites(due, now, this.opts);
    const ends = split.endsSince === null ? new Map<string, Date>() : await taskRunEndsSince(mongo, split.quiet.map((d) => d._id), new Date(split.endsSince));
    const plan = planSweep(split, ends, now, this.opts);
    await deferDagRunSweeps(mongo, plan.idleSoon, new Date(now), new Date(plan.soonAt));
    await deferDagRunSweeps(mongo, plan.idleLong, new Date(now), new Date(plan.laterAt));
    let advanced = 0;
    for (const d of plan.full) {
      if (!(await takeDagRunForSweep(mongo, d, new Date(plan.soonAt), new Date(now)))) continue;
      await advancer.advance(d._id);
      advanced++;
    }
    return { looked: due.length, advanced };
  }
}
