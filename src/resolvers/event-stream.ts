/**
 * Bus events as the async iterator a GraphQL subscription consumes. The bus subscriptions live
 * exactly as long as the iterator: `return()` (client unsubscribed or socket closed) releases them.
 * A slow consumer cannot grow memory without bound: past `maxBuffered` pending events the oldest are
 * dropped (a subscriber can always re-read state with a query). run-stream.ts and dag-stream.ts
 * say what they subscribe to and which events they pass on.
 */

import { LimitReachedError } from "../domain/index.js";

/**
 * Subscribes with `push` as the handler; resolves to what releases the subscriptions. `last`: the
 * stream completes once the consumer has had this event (nothing pushed after it is passed on).
 */
export type Subscriber<T> = (push: (event: T, last?: boolean) => void) => Promise<() => Promise<void>>;

export function eventStream<T>(subscribe: Subscriber<T>, maxBuffered: number): AsyncIterableIterator<T> {
  const buffer: T[] = [];
  let waiting: ((r: IteratorResult<T>) => void) | null = null;
  let done = false;
  /** The last event was pushed: the stream completes once the buffer is drained. */
  let ending = false;
  let released: Promise<void> | null = null;
  // Deferred: a subscriber may push its last event before `subscribe` returned.
  const release = (): Promise<void> => (released ??= Promise.resolve().then(() => unsubscribe).then((r) => r()));
  const unsubscribe = subscribe((event, last) => {
    if (done || ending) return;
    if (last) {
      ending = true;
      // Released at once: nothing more is passed on.
      void release().catch(() => undefined);
    }
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
      await release();
    }
    return { value: undefined, done: true };
  };

  return {
    async next() {
      await unsubscribe; // subscribed before the first event can be missed
      if (buffer.length > 0) return { value: buffer.shift()!, done: false };
      if (done || ending) {
        done = true;
        return { value: undefined, done: true };
      }
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

/**
 * Most event subscriptions (`runUpdated`, `dagRunUpdated`, `clusterStatsUpdated` and `alertFired`
 * together: one budget) one user (not an administrator) holds at once, per API process. Each subscription decodes every message of the run events (and the DAG
 * events) of every user: without a bound, one user's idle subscriptions (1,200 a minute fit the
 * request budget) multiplied the API's work for every other user's run (docs/security.md).
 */
export const MAX_EVENT_SUBSCRIPTIONS_PER_USER = 20;

/** Open event subscriptions by user id, per set of services (one app per process; tests start several). */
const openByOwner = new WeakMap<object, Map<string, number>>();

/**
 * `make()`'s stream, counted against the user's MAX_EVENT_SUBSCRIPTIONS_PER_USER in `scope` until
 * it ends (returned or thrown into); RESOURCE_EXHAUSTED when the user holds that many already. Unlimited
 * for administrators.
 */
export function countedStream<T>(scope: object, who: { userId: string; role: string }, make: () => AsyncIterableIterator<T>): AsyncIterableIterator<T> {
  if (who.role === "ADMIN") return make();
  let open = openByOwner.get(scope);
  if (!open) openByOwner.set(scope, (open = new Map()));
  const counts = open;
  const n = counts.get(who.userId) ?? 0;
  if (n >= MAX_EVENT_SUBSCRIPTIONS_PER_USER) {
    throw new LimitReachedError(`you have ${n} event subscriptions open (runUpdated, dagRunUpdated, clusterStatsUpdated and alertFired count together), the most allowed at once: close one first`);
  }
  const inner = make();
  counts.set(who.userId, n + 1);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    const left = (counts.get(who.userId) ?? 1) - 1;
    if (left > 0) counts.set(who.userId, left);
    else counts.delete(who.userId);
  };
  return {
    next: () => inner.next(),
    return: async (v?: unknown) => {
      release();
      return inner.return ? inner.return(v) : { value: undefined, done: true };
    },
    throw: async (e?: unknown) => {
      release();
      if (inner.throw) return inner.throw(e);
      throw e;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
