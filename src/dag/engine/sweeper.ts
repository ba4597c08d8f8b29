/**
 * The sweeper (scheduler role): re-advances RUNNING DAG runs that have not been advanced for a
 * while, so a process killed between a task run's final write and its DAG run's advance loses
 * nothing (the advance is idempotent; nothing changes when nothing moved). Each sweeper takes the
 * DAG runs it looks at by compare-and-set on `sweepAt`, so several schedulers share the work.
 */
import type { Clock } from "../../shared-state/index.js";
import { Periodic, type Logger } from "../../support/index.js";
import { takeDagRunsToSweep, type Mongo } from "../../store/index.js";
import type { DagAdvancer } from "./advance.js";

export interface SweeperOptions {
  /** How often the sweeper looks. */
  everyMs: number;
  /** When a swept DAG run is looked at again if nothing writes it meanwhile. */
  sweepAfterMs: number;
  /** Most DAG runs advanced per pass. */
  batch: number;
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

  /** One pass: the DAG runs due for a look, advanced. Returns how many. */
  async sweepOnce(): Promise<number> {
    const now = this.deps.clock();
    const ids = await takeDagRunsToSweep(this.deps.mongo, new Date(now), new Date(now + this.opts.sweepAfterMs), this.opts.batch);
    for (const id of ids) await this.deps.advancer.advance(id);
    await this.deps.repairLocks();
    return ids.length;
  }
}
