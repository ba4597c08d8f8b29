/**
 * Turns run events from the bus into the async iterator a GraphQL subscription consumes. The bus
 * subscription lives exactly as long as the iterator: `return()` (client unsubscribed or socket
 * closed) releases it. A slow consumer cannot grow memory without bound: past `maxBuffered`
 * pending events the oldest are dropped (a subscriber can always re-read state with `runs`).
 */
import type { RunEvent, RunEvents } from "../core/index.js";

export function runStream(
  events: RunEvents,
  accept: (run: RunEvent) => boolean,
  maxBuffered = 1_000,
): AsyncIterableIterator<RunEvent> {
  const buffer: RunEvent[] = [];
  let waiting: ((r: IteratorResult<RunEvent>) => void) | null = null;
  let done = false;
  const unsubscribe = events.subscribe((run) => {
    if (done || !accept(run)) return;
    if (waiting) {
      const w = waiting;
      waiting = null;
      w({ value: run, done: false });
      return;
    }
    buffer.push(run);
    if (buffer.length > maxBuffered) buffer.shift();
  });

  const finish = async (): Promise<IteratorResult<RunEvent>> => {
    if (!done) {
      done = true;
      waiting?.({ value: undefined, done: true });
      waiting = null;
      await (await unsubscribe)();
    }
    return { value: undefined, done: true };
  };

  return {
    async next() {
      await unsubscribe; // subscribed before the first event can be missed
      if (buffer.length > 0) return { value: buffer.shift()!, done: false };
      if (done) return { value: undefined, done: true };
      return new Promise<IteratorResult<RunEvent>>((resolve) => (waiting = resolve));
    },
    return: finish,
    throw: async (e?: unknown) => {
      await finish();
      throw e;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
