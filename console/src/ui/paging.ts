/**
 * Walking a Relay connection page by page with a way back: a stack of the cursors of the pages
 * shown so far (the first page's `null`). Every paged list of the console keeps its place this way.
 */
import { useCallback, useState } from "react";

/** What a page says of what follows it (a connection's `pageInfo`; undefined while loading). */
export interface PageEnd {
  hasNextPage: boolean;
  endCursor?: string | null;
}

export function useCursorStack() {
  const [cursors, setCursors] = useState<Array<string | null>>([null]);
  /** Back to the first page (a filter changed). */
  const reset = useCallback(() => setCursors([null]), []);
  return {
    /** The cursor to read the current page after. */
    after: cursors[cursors.length - 1] ?? null,
    /** The current page's number, from 1. */
    page: cursors.length,
    hasPrev: cursors.length > 1,
    reset,
    prev: () => setCursors((c) => (c.length > 1 ? c.slice(0, -1) : c)),
    /** To the page after the one `end` describes (nothing when it says there is none). */
    next: (end: PageEnd | undefined) => {
      const cursor = end?.hasNextPage ? end.endCursor : null;
      if (cursor) setCursors((c) => [...c, cursor]);
    },
  };
}
