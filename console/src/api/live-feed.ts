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
  setFeedUp(true);
  setTimeout(() => {
    for (const l of [...listeners]) l();
  }, FEED_SETTLE_MS);
}

// ---- whether the feed is up, for the "Live" note ----

/**
 * graphql-ws retries a dropped connection by itself (console/src/api/client.ts) and tells the
 * subscriptions nothing meanwhile, so a view's own error says nothing about a server that is down
 * or restarting: the client reports here instead. Down from a close that was not the client's own
 * (code 1000, the lazy close when no view subscribes) until the server acknowledges a connection.
 */
let feedUp = true;
const upListeners = new Set<Listener>();

function setFeedUp(up: boolean): void {
  if (up === feedUp) return;
  feedUp = up;
  for (const l of [...upListeners]) l();
}

/** Called by the API client when the connection closed, with its close code. */
export function feedClosed(code: number | undefined): void {
  if (code !== 1000) setFeedUp(false);
}

/** For useSyncExternalStore. */
export function subscribeFeedUp(listener: Listener): () => void {
  upListeners.add(listener);
  return () => void upListeners.delete(listener);
}

export function isFeedUp(): boolean {
  return feedUp;
}
