/**
 * The sweeper (scheduler role): re-advances RUNNING DAG runs that have not been advanced for a
 * while, so a process killed between a task run's final write and its DAG run's advance loses
 * nothing (the advance is idempotent; nothing changes when nothing moved). Each sweeper takes the
 * DAG runs it looks at by compare-and-set on `sweepAt`, so several schedulers share the work.
 */
import { coerceError } from "../../domain/index.js";
import type { Clock } from "../../shared-state/index.js";
import type { Logger } from "../../support/index.js";
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
  private timer: NodeJS.Timeout | null = null;
  private pass: Promise<void> | null = null;

  constructor(
    private readonly deps: { mongo: Mongo; clock: Clock; log: Logger; advancer: DagAdvancer; repairLocks: () => Promise<void> },
    private readonly opts: SweeperOptions,
  ) {}

  start(): void {
    const tick = () => {
      this.pass = this.sweepOnce()
        .then(() => undefined)
        .catch((e: unknown) => this.deps.log.warn({ err: coerceError(e) }, "DAG sweep failed; next pass retries"))
        .finally(() => {
          this.pass = null;
          if (this.timer) this.timer = setTimeout(tick, this.opts.everyMs);
        });
    };
    this.timer = setTimeout(tick, this.opts.everyMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.pass;
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
