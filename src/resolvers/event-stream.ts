/**
 * Bus events as the async iterator a GraphQL subscription consumes. The bus subscriptions live
 * exactly as long as the iterator: `return()` (client unsubscribed or socket closed) releases them.
 * A slow consumer cannot grow memory without bound: past `maxBuffered` pending events the oldest are
 * dropped (a subscriber can always re-read state with a query). run-stream.ts and dag-stream.ts
 * say what they subscribe to and which events they pass on.
 */

/** Subscribes with `push` as the handler; resolves to what releases the subscriptions. */
export type Subscriber<T> = (push: (event: T) => void) => Promise<() => Promise<void>>;

export function eventStream<T>(subscribe: Subscriber<T>, maxBuffered: number): AsyncIterableIterator<T> {
  const buffer: T[] = [];
  let waiting: ((r: IteratorResult<T>) => void) | null = null;
  let done = false;
  const unsubscribe = subscribe((event) => {
    if (done) return;
    if (waiting) {
      const w = waiting;
      waiting = null;
      w({ value: event, done: false });
      return;
    }
    buffer.push(event);
    if (buffer.length > maxBuffered) buffer.shift();
  });

  const finish = async (): Promise<IteratorResult<T>> => {
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
      return new Promise<IteratorResult<T>>((resolve) => (waiting = resolve));
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
