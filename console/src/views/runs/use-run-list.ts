/**
 * A live, paged list of runs: pages fetched by cursor (newest first), and every `runUpdated` event
 * of the caller merged in: a run already listed is updated in place, a new run the list's search
 * would have found is inserted where it belongs. Events are coalesced per animation frame, so a
 * burst of thousands of status changes costs one render per frame.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { useClient } from "urql";
import type { CombinedError } from "@urql/core";
import { ConsoleRunsLiveDocument, type ConsoleRunRowFragment } from "../../../../generated/client/graphql";
import { onFeedConnected } from "../../api/live-feed";

export type RunRow = ConsoleRunRowFragment;

export interface RunPage {
  rows: RunRow[];
  endCursor: string | null;
  hasNext: boolean;
}

export interface RunList {
  rows: RunRow[];
  hasNext: boolean;
  loading: boolean;
  error: CombinedError | Error | null;
  /** The live feed failed (it reconnects by itself when the connection comes back). */
  liveError: CombinedError | null;
  loadMore(): void;
  /** Merges runs the caller got back (from a mutation) into the list. */
  merge(runs: RunRow[]): void;
  reload(): void;
}

/** Newest first: by scheduledFor, then id (ids grow with time), as the API orders. */
function newer(a: RunRow, b: RunRow): boolean {
  const d = Date.parse(a.scheduledFor) - Date.parse(b.scheduledFor);
  return d !== 0 ? d > 0 : a.id > b.id;
}

export function useRunList(opts: {
  /** Changes when the search changes: the list starts over. */
  key: string;
  /** `recheck`: the first page read again after the live feed (re)connected. */
  fetchPage(after: string | null, recheck?: boolean): Promise<RunPage>;
  /** Would the search have found this run? (for runs that arrive live) */
  matches(run: RunRow): boolean;
}): RunList {
  const client = useClient();
  const [rows, setRows] = useState<RunRow[]>([]);
  const [hasNext, setHasNext] = useState(false);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<CombinedError | Error | null>(null);
  const [liveError, setLiveError] = useState<CombinedError | null>(null);
  const [generation, setGeneration] = useState(0);

  // The list itself lives in refs; `rows` is its rendered snapshot.
  const byId = useRef(new Map<string, RunRow>());
  const order = useRef<string[]>([]);
  const cursor = useRef<string | null>(null);
  const more = useRef(false);
  const loaded = useRef(false);
  const busy = useRef(false);
  const queue = useRef<RunRow[]>([]);
  const frame = useRef(0);
  /** The live feed connected while the first page was being read: read it again once it is in. */
  const refreshWhenLoaded = useRef(false);
  const optsRef = useRef(opts);
  optsRef.current = opts;

  const publish = useCallback(() => {
    setRows(order.current.map((id) => byId.current.get(id)!));
    setHasNext(more.current);
  }, []);

  /** Inserts or updates one run; false when it does not belong in the list. */
  const apply = useCallback((run: RunRow, live: boolean): boolean => {
    const had = byId.current.get(run.id);
    if (had) {
      if (Date.parse(run.updatedAt) < Date.parse(had.updatedAt)) return false;
      byId.current.set(run.id, { ...had, ...run });
      return true;
    }
    if (live) {
      if (!optsRef.current.matches(run)) return false;
      // Older than every loaded run while more pages exist: it will come with those pages.
      const last = order.current[order.current.length - 1];
      if (more.current && last && !newer(run, byId.current.get(last)!)) return false;
    }
    byId.current.set(run.id, run);
    // Binary search for its place (newest first).
    const ids = order.current;
    let lo = 0;
    let hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (newer(byId.current.get(ids[mid]!)!, run)) lo = mid + 1;
      else hi = mid;
    }
    ids.splice(lo, 0, run.id);
    return true;
  }, []);

  const flush = useCallback(() => {
    frame.current = 0;
    if (!loaded.current) return; // applied after the first page
    const events = queue.current.splice(0);
    let changed = false;
    for (const e of events) changed = apply(e, true) || changed;
    if (changed) publish();
  }, [apply, publish]);

  /**
   * Reads the first page again and merges it (a listed run is replaced only by a newer version), for
   * the changes the live feed did not deliver: those before it connected and while it was down. The
   * cursor of the loaded pages is left as it is.
   */
  const refreshFirstPage = useCallback(
    async (gen: { stale: boolean }) => {
      try {
        const page = await optsRef.current.fetchPage(null, true);
        if (gen.stale) return;
        let changed = false;
        for (const r of page.rows) changed = apply(r, false) || changed;
        if (changed) publish();
      } catch {
        // The next event or reconnection brings it; an error of the list itself is shown by fetchMore.
      }
    },
    [apply, publish],
  );

  const fetchMore = useCallback(
    async (first: boolean, gen: { stale: boolean }) => {
      if (busy.current && !first) return;
      busy.current = true;
      setLoading(true);
      try {
        const page = await optsRef.current.fetchPage(first ? null : cursor.current);
        if (gen.stale) return;
        for (const r of page.rows) apply(r, false);
        cursor.current = page.endCursor;
        more.current = page.hasNext;
        setError(null);
        if (first) {
          loaded.current = true;
          flush();
          if (refreshWhenLoaded.current) {
            refreshWhenLoaded.current = false;
            void refreshFirstPage(gen);
          }
        }
        publish();
      } catch (e) {
        if (!gen.stale) setError(e as Error);
      } finally {
        if (!gen.stale) {
          busy.current = false;
          setLoading(false);
        }
      }
    },
    [apply, flush, publish, refreshFirstPage],
  );

  const current = useRef({ stale: false });

  useEffect(
    () =>
      onFeedConnected(() => {
        if (loaded.current) void refreshFirstPage(current.current);
        else refreshWhenLoaded.current = true;
      }),
    [refreshFirstPage],
  );

  // A new search: start over.
  useEffect(() => {
    const gen = { stale: false };
    current.current = gen;
    byId.current = new Map();
    order.current = [];
    cursor.current = null;
    more.current = false;
    loaded.current = false;
    refreshWhenLoaded.current = false;
    busy.current = false;
    queue.current = [];
    setRows([]);
    void fetchMore(true, gen);
    return () => {
      gen.stale = true;
    };
  }, [opts.key, generation, fetchMore]);

  // Every status change of the caller's runs.
  useEffect(() => {
    const sub = client.subscription(ConsoleRunsLiveDocument, {}).subscribe((r) => {
      if (r.error) {
        setLiveError(r.error);
        return;
      }
      setLiveError(null);
      if (!r.data) return;
      queue.current.push(r.data.runUpdated);
      if (!frame.current) frame.current = requestAnimationFrame(flush);
    });
    return () => {
      sub.unsubscribe();
      if (frame.current) cancelAnimationFrame(frame.current);
      frame.current = 0;
    };
  }, [client, flush]);

  const loadMore = useCallback(() => {
    if (!more.current || busy.current || !loaded.current) return;
    void fetchMore(false, current.current);
  }, [fetchMore]);

  const merge = useCallback(
    (runs: RunRow[]) => {
      let changed = false;
      for (const r of runs) if (byId.current.has(r.id)) changed = apply(r, false) || changed;
      if (changed) publish();
    },
    [apply, publish],
  );

  const reload = useCallback(() => setGeneration((g) => g + 1), []);

  return { rows, hasNext, loading, error, liveError, loadMore, merge, reload };
}
