/** Page arguments as the API takes them (`first`, `after`), and pages as it answers them. */
import { ValidationError } from "../domain/index.js";
import type { Page, PageQuery } from "../store/index.js";

export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;

export function pageSize(first: number | null | undefined): number {
  if (first == null) return DEFAULT_PAGE;
  if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE) {
    throw new ValidationError("first", `must be from 1 to ${MAX_PAGE} (got ${first})`);
  }
  return first;
}

/** The page `first`/`after` ask for (`first` checked here; the cursor where the page is read). */
export function pageArgs(first: number | null | undefined, after: string | null | undefined): PageQuery {
  return { size: pageSize(first), after };
}

/** The page with its documents turned into API objects. */
export function mapPage<D, N>(page: Page<D>, map: (d: D) => N): Page<N> {
  return { edges: page.edges.map((e) => ({ cursor: e.cursor, node: map(e.node) })), pageInfo: page.pageInfo };
}
