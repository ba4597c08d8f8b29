/**
 * When the live feed (graphql-ws) has connected, or connected again after a drop. Events sent
 * while it was down, or before a view's subscription reached the server, were never received: a
 * view that shows live data listens here and reads what it shows once more, keeping the newest
 * version of each item (items carry `updatedAt`).
 *
 * The protocol says when the connection is accepted, not when each subscription is in place on
 * the server (they are sent right after the acknowledgement), so the listeners are called a
 * moment later: a read sent then is answered after the subscriptions were registered.
 */
type Listener = () => void;

const listeners = new Set<Listener>();

/** How long after the acknowledgement the views re-read. */
export const FEED_SETTLE_MS = 400;

export function onFeedConnected(listener: Listener): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

/** Called by the API client on every connection the server acknowledged. */
export function feedConnected(): void {
  setTimeout(() => {
    for (const l of [...listeners]) l();
  }, FEED_SETTLE_MS);
}
