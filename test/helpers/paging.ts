/** Walking a Relay connection in the API's paging tests (users, API keys, alert rules, nodes). */
import { expect } from "vitest";

export interface Conn<N> {
  edges: Array<{ cursor: string; node: N }>;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** Every page of a list, calling `between` after each page but the last; the pages' nodes in order. */
export async function walk<N>(read: (after: string | null) => Promise<Conn<N>>, between: (page: number) => Promise<void>): Promise<N[]> {
  const seen: N[] = [];
  let after: string | null = null;
  for (let page = 1; ; page++) {
    const conn = await read(after);
    seen.push(...conn.edges.map((e) => e.node));
    expect(conn.pageInfo.endCursor).toBe(conn.edges.at(-1)?.cursor ?? null);
    if (!conn.pageInfo.hasNextPage) return seen;
    await between(page);
    after = conn.pageInfo.endCursor;
    expect(page, "the walk never ends").toBeLessThan(50);
  }
}
