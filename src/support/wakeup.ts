/**
 * A sleep that `wake()` cuts short: the scheduler loop sleeps until its next timer is due and the
 * executor until work may be there, and both are woken early by pub/sub notices. A `wake()` while
 * nobody sleeps is remembered, so the next `sleep()` returns at once: a notice that arrives while
 * the loop is busy (an executor pulling, a slot freed mid-pull) is never lost until the next poll.
 */
export class Wakeup {
  private resolve: (() => void) | null = null;
  private pending = false;

  wake(): void {
    const r = this.resolve;
    if (r) {
      this.resolve = null;
      r();
    } else {
      this.pending = true;
    }
  }

  /** Waits `ms`, or less when woken; resolves at once when a wake-up is pending. */
  sleep(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.resolve = null;
        resolve();
      }, ms);
      this.resolve = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }
}
