/** What a collection hands the server while a test's request runs: the attacks on large reads measure it. */
import type { Collection, Document } from "mongodb";
import { vi } from "vitest";

/**
 * The DAG sweeper's look for task runs ended since a DAG run's last full round (a scheduler role
 * runs in the test app, and its passes may fall within a request): not the request's reads.
 */
const bySweeper = (filter: Document): boolean => filter.dagRunId?.$in !== undefined && filter.finishedAt?.$gt !== undefined;

/**
 * The documents (and their bytes, as JSON) that `collection.find` answers while `fn` runs, the DAG
 * sweeper's reads left out; `only`: just the finds whose filter it accepts (a request's own, where
 * background work of the app may read the same collection meanwhile).
 */
export async function documentsFound(collection: unknown, fn: () => Promise<unknown>, only: (filter: Document) => boolean = () => true): Promise<{ docs: number; bytes: number }> {
  const c = collection as Collection<Document>;
  const find = c.find.bind(c);
  const seen = { docs: 0, bytes: 0 };
  const spy = vi.spyOn(c, "find").mockImplementation(((filter: Document, options?: Document) => {
    const cursor = find(filter, options);
    if (bySweeper(filter) || !only(filter)) return cursor;
    const toArray = cursor.toArray.bind(cursor);
    cursor.toArray = async () => {
      const got = await toArray();
      seen.docs += got.length;
      for (const d of got) seen.bytes += JSON.stringify(d).length;
      return got;
    };
    return cursor;
  }) as never);
  try {
    await fn();
  } finally {
    spy.mockRestore();
  }
  return seen;
}
