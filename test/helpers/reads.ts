/** What a collection hands the server while a test's request runs: the attacks on large reads measure it. */
import type { Collection, Document } from "mongodb";
import { vi } from "vitest";

/** The documents (and their bytes, as JSON) that `collection.find` answers while `fn` runs. */
export async function documentsFound(collection: unknown, fn: () => Promise<unknown>): Promise<{ docs: number; bytes: number }> {
  const c = collection as Collection<Document>;
  const find = c.find.bind(c);
  const seen = { docs: 0, bytes: 0 };
  const spy = vi.spyOn(c, "find").mockImplementation(((filter: Document, options?: Document) => {
    const cursor = find(filter, options);
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
