import type { EventBus, SharedState } from "../../src/shared-state/ports.js";

/** A fixed reference moment: tests state their times relative to it, never "now" (STYLE H17). */
export const T0 = Date.UTC(2030, 0, 1);

/**
 * One isolated deployment of the shared state under test. `peer()` opens another client of the
 * same deployment (for Redis: its own connections, as another process would), and `dispose()`
 * closes everything it opened and removes what it stored.
 */
export interface Deployment {
  state: SharedState;
  peer(): Promise<SharedState>;
  dispose(): Promise<void>;
}

export type OpenDeployment = (opts: { shardCount: number }) => Promise<Deployment>;

/** Records what a channel receives; `next(n)` waits until `n` messages in total have arrived. */
export interface Recorder {
  readonly messages: string[];
  next(n: number, timeoutMs?: number): Promise<string[]>;
  stop(): Promise<void>;
}

export async function record(bus: EventBus, channel: string): Promise<Recorder> {
  const messages: string[] = [];
  let wake: (() => void) | null = null;
  const unsubscribe = await bus.subscribe(channel, (m) => {
    messages.push(m);
    wake?.();
  });
  return {
    messages,
    async next(n, timeoutMs = 2_000) {
      if (messages.length >= n) return messages.slice();
      let timer: NodeJS.Timeout | undefined;
      try {
        await new Promise<void>((resolve, reject) => {
          wake = () => messages.length >= n && resolve();
          timer = setTimeout(() => reject(new Error(`${channel}: ${messages.length} of ${n} messages after ${timeoutMs} ms`)), timeoutMs);
        });
      } finally {
        wake = null;
        clearTimeout(timer); // no timer may outlive the test (STACK G15)
      }
      return messages.slice();
    },
    stop: unsubscribe,
  };
}

export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
