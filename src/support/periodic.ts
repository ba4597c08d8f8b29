/**
 * The one background loop of the product: a pass run every `everyMs`, never two at once. Every
 * periodic task of every role runs on it (sweepers, retention, the scheduler's background passes,
 * the executor's claim guard, the API's session re-checks, the artifact sweep).
 *
 * Two cadences:
 * - `after-end` (default): the next pass starts `everyMs` after the one before ended, so a slow pass
 *   pushes the next one back (sweeps, whose work grows with the backlog);
 * - `fixed-rate`: a pass is due every `everyMs` from `start()`; one due while the pass before is still
 *   running is skipped, not stacked (checks that should keep their rhythm while the store is slow).
 *
 * A pass that throws is logged with `failure` (at `level`, `warn` unless given) and the next one runs
 * on time; `stop` waits for the pass in flight. `start` on a running loop does nothing, and a stopped
 * loop can be started again.
 */
import { coerceError } from "../domain/index.js";
import type { Logger } from "./log.js";

export interface PeriodicOptions {
  everyMs: number;
  log: Logger;
  /** What the log says when a pass throws, e.g. "artifact sweep failed; trying again next time". */
  failure: string;
  /** @default "after-end" */
  cadence?: "after-end" | "fixed-rate";
  /** @default "warn" */
  level?: "warn" | "error";
  /** The timer does not keep the process alive (loops of a process that ends by other means). */
  unref?: boolean;
}

export class Periodic {
  private timer: NodeJS.Timeout | null = null;
  private pass: Promise<void> | null = null;
  /** Bumped by each start and stop, so a pass of an earlier start never re-arms the timer. */
  private generation = 0;

  constructor(
    private readonly run: () => Promise<unknown>,
    private readonly opts: PeriodicOptions,
  ) {}

  get running(): boolean {
    return this.timer !== null;
  }

  start(): void {
    if (this.timer) return;
    const generation = ++this.generation;
    if (this.opts.cadence === "fixed-rate") {
      this.timer = setInterval(() => {
        if (!this.pass) this.runPass();
      }, this.opts.everyMs);
    } else {
      const tick = () => {
        this.runPass().finally(() => {
          if (this.generation === generation) this.timer = this.unref(setTimeout(tick, this.opts.everyMs));
        });
      };
      this.timer = setTimeout(tick, this.opts.everyMs);
    }
    this.unref(this.timer);
  }

  async stop(): Promise<void> {
    this.generation++;
    if (this.timer) {
      clearTimeout(this.timer);
      clearInterval(this.timer);
    }
    this.timer = null;
    await this.pass;
  }

  private runPass(): Promise<void> {
    // After a stop and a new start, the first start's pass may still be in flight: wait for it.
    const pass = (this.pass ?? Promise.resolve())
      .then(() => this.run())
      .then(
        () => undefined,
        (e: unknown) => this.opts.log[this.opts.level ?? "warn"]({ err: coerceError(e) }, this.opts.failure),
      )
      .finally(() => {
        if (this.pass === pass) this.pass = null;
      });
    this.pass = pass;
    return pass;
  }

  private unref(t: NodeJS.Timeout): NodeJS.Timeout {
    if (this.opts.unref) t.unref();
    return t;
  }
}
