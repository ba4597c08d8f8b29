/** What a started app must stop, in reverse order of starting. */
import type { Logger } from "../support/index.js";

export class Stops {
  private readonly stops: Array<() => Promise<void>> = [];

  constructor(private readonly log: Logger) {}

  push(stop: () => Promise<void>): void {
    this.stops.push(stop);
  }

  /** Runs every stop, last started first; a failing one is logged and the rest still run. */
  async all(): Promise<void> {
    while (this.stops.length > 0) {
      const stop = this.stops.pop()!;
      await stop().catch((e) => this.log.error({ err: e }, "error during shutdown"));
    }
  }
}
