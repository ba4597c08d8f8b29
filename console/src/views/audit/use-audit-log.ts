/**
 * The audit trail as the view lists it: the first page for the filters, then the next pages by
 * cursor ("Load more"). A change of filters starts again; an answer for filters no longer shown is
 * dropped.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import type { CombinedError } from "@urql/core";
import { useClient } from "urql";
import { ConsoleAuditLogDocument, type ConsoleAuditEntryFragment } from "../../../../generated/client/graphql";
import { AUDIT_PAGE, auditFilter, type AuditFilters } from "./filters";

export type AuditRow = ConsoleAuditEntryFragment;

export interface AuditList {
  rows: AuditRow[];
  /** False until the first page for these filters has been answered. */
  loaded: boolean;
  loading: boolean;
  hasNext: boolean;
  error: CombinedError | Error | null;
  loadMore(): void;
  reload(): void;
}

export function useAuditLog(filters: AuditFilters, key: string): AuditList {
  const client = useClient();
  const [state, setState] = useState<{ key: string; rows: AuditRow[]; cursor: string | null; hasNext: boolean; loaded: boolean }>({ key, rows: [], cursor: null, hasNext: false, loaded: false });
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<CombinedError | Error | null>(null);
  const current = useRef(key);
  current.current = key;
  const busy = useRef(false);

  const fetchPage = useCallback(
    async (after: string | null) => {
      const forKey = key;
      busy.current = true;
      setLoading(true);
      try {
        const r = await client.query(ConsoleAuditLogDocument, { filter: auditFilter(filters), first: AUDIT_PAGE, after }, { requestPolicy: "network-only" }).toPromise();
        if (current.current !== forKey) return;
        if (r.error || !r.data) {
          setError(r.error ?? new Error("no answer"));
          setState((s) => ({ ...s, loaded: true }));
          return;
        }
        const c = r.data.auditLog;
        const page = c.edges.map((e) => e.node);
        setError(null);
        setState((s) => ({ key: forKey, rows: after === null || s.key !== forKey ? page : [...s.rows, ...page], cursor: c.pageInfo.endCursor ?? null, hasNext: c.pageInfo.hasNextPage, loaded: true }));
      } finally {
        if (current.current === forKey) {
          busy.current = false;
          setLoading(false);
        }
      }
    },
    // `key` stands for the filters (filtersToSearch).
    [client, key],
  );

  useEffect(() => {
    setState({ key, rows: [], cursor: null, hasNext: false, loaded: false });
    setError(null);
    busy.current = false;
    void fetchPage(null);
  }, [fetchPage, key]);

  const loadMore = useCallback(() => {
    if (busy.current || !state.hasNext || !state.cursor) return;
    void fetchPage(state.cursor);
  }, [fetchPage, state.hasNext, state.cursor]);
  const reload = useCallback(() => void fetchPage(null), [fetchPage]);

  const mine = state.key === key;
  return { rows: mine ? state.rows : [], loaded: mine && state.loaded, loading, hasNext: mine && state.hasNext, error, loadMore, reload };
}
