/** Whether a view's live feed is delivering: "Live", or interrupted (it reconnects by itself). */
import { useSyncExternalStore } from "react";
import type { CombinedError } from "@urql/core";
import { isFeedUp, subscribeFeedUp } from "../../api/live-feed";

export function LiveNote({ error }: { error: CombinedError | null }) {
  // The view's subscription error, or the connection itself down (a server restarting: graphql-ws
  // retries without telling the subscription).
  const up = useSyncExternalStore(subscribeFeedUp, isFeedUp);
  if (error || !up) return <span className="live-note off" title={error?.message ?? "the connection to the server is down"}>Live updates interrupted, reconnecting…</span>;
  return <span className="live-note on">Live</span>;
}
