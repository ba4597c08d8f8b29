/**
 * A pass run every `everyMs`, counted from the end of the one before (passes never overlap). A pass
 * that throws is logged with `failure` and the next one runs on time; `stop` waits for the pass in
 * flight. The DAG sweeper and the DAG definitions' retention run on it.
 */
import { coerceError } from "../domain/index.js";
import type { Logger } from "./log.js";

export class Periodic {
  private timer: NodeJS.Timeout | null = null;
  private pass: Promise<unknown> | null = null;

  constructor(
    private readonly run: () => Promise<unknown>,
    private readonly opts: { everyMs: number; log: Logger; failure: string },
  ) {}

  start(): void {
    const tick = () => {
      this.pass = this.run()
        .catch((e: unknown) => this.opts.log.warn({ err: coerceError(e) }, this.opts.failure))
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
}
