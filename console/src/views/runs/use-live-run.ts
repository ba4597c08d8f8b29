/** One run, kept current: read once, then every `runUpdated(runId)` event, and read again each time the live feed (re)connects (the newest version wins). */
import { useCallback, useEffect, useState } from "react";
import { useClient, useQuery } from "urql";
import type { CombinedError } from "@urql/core";
import { ConsoleRunDocument, ConsoleRunLiveDocument, type ConsoleRunDetailFragment, type ConsoleRunQuery } from "../../../../generated/client/graphql";
import { onFeedConnected } from "../../api/live-feed";

export type RunDetail = ConsoleRunDetailFragment;
export type RunJob = ConsoleRunQuery["run"]["job"];

function newest(a: RunDetail | null, b: RunDetail | null): RunDetail | null {
  if (!a) return b;
  if (!b) return a;
  return Date.parse(b.updatedAt) >= Date.parse(a.updatedAt) ? b : a;
}

export function useLiveRun(id: string): {
  run: RunDetail | null;
  job: RunJob | null;
  fetching: boolean;
  error: CombinedError | undefined;
  liveError: CombinedError | null;
  /** A version of the run the caller got (a mutation's answer). */
  update(run: RunDetail): void;
} {
  const client = useClient();
  const [q] = useQuery({ query: ConsoleRunDocument, variables: { id }, requestPolicy: "network-only" });
  const [live, setLive] = useState<RunDetail | null>(null);
  const [liveError, setLiveError] = useState<CombinedError | null>(null);

  useEffect(() => {
    setLive(null);
    setLiveError(null);
    const sub = client.subscription(ConsoleRunLiveDocument, { runId: id }).subscribe((r) => {
      if (r.error) setLiveError(r.error);
      else if (r.data) {
        setLiveError(null);
        const next = r.data.runUpdated;
        setLive((prev) => newest(prev, next));
      }
    });
    // Changes the feed did not deliver (before it connected, while it was down): read the run again.
    const off = onFeedConnected(() => {
      void client
        .query(ConsoleRunDocument, { id }, { requestPolicy: "network-only" })
        .toPromise()
        .then((r) => {
          const again = r.data?.run;
          if (again) setLive((prev) => newest(prev, again));
        });
    });
    return () => {
      sub.unsubscribe();
      off();
    };
  }, [client, id]);

  const update = useCallback((run: RunDetail) => setLive((prev) => newest(prev, run)), []);
  const loaded = q.data?.run ?? null;
  return { run: newest(loaded, live), job: loaded?.job ?? null, fetching: q.fetching, error: q.error, liveError, update };
}
