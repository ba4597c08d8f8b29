/** Whether a view's live feed is delivering: "Live", or interrupted (it reconnects by itself). */
import type { CombinedError } from "@urql/core";

export function LiveNote({ error }: { error: CombinedError | null }) {
  if (error) return <span className="live-note off" title={error.message}>Live updates interrupted, reconnecting…</span>;
  return <span className="live-note on">Live</span>;
}
