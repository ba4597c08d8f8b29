/** Aborting one run's process (kept apart from process.ts, which the benchmarks' no-op executor replaces). */

/**
 * What runProcess needs of an abort signal: an `AbortSignal` fits, and so does the executor's
 * lighter {@link RunAbort} (an AbortController per run was a measurable share of a start).
 */
export interface AbortLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** A one-shot abort for one run: `abort(reason)` calls the listeners once. */
export class RunAbort implements AbortLike {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | null = null;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = null;
    for (const l of listeners ?? []) l();
  }

  addEventListener(_type: "abort", listener: () => void): void {
    if (this.aborted) return;
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const i = this.listeners?.indexOf(listener) ?? -1;
    if (i >= 0) this.listeners!.splice(i, 1);
  }
}
