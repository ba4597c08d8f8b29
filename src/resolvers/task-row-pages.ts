/**
 * Relay pages of a DAG run's task rows (`DagRun.tasks`). The rows are built whole from the DAG run
 * document (dag-mappers.ts), in definition order, a mapped task followed by its instances; a
 * cursor names a row by its task key and instance index (not its position), so instances that
 * appear while a client pages (a mapped task's, once its input is known) do not shift the page.
 */
import { ValidationError } from "../domain/index.js";

/** Rows a page has when `first` is not given (a DAG of 1000 tasks in one page). */
export const DEFAULT_TASK_ROWS = 1_000;
/** Most rows a page answers at once. */
export const MAX_TASK_ROWS = 5_000;

/** What names a row: its task and, for a mapped task's instance, the instance's index. */
export interface TaskRowId {
  key: string;
  mapIndex: number | null;
}

const TAG = "task";

export function taskRowCursor(row: TaskRowId): string {
  return Buffer.from(JSON.stringify([TAG, row.key, row.mapIndex])).toString("base64url");
}

function decodeTaskRowCursor(cursor: string): TaskRowId {
  try {
    const [tag, key, mapIndex] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    if (tag === TAG && typeof key === "string" && (mapIndex === null || (Number.isInteger(mapIndex) && (mapIndex as number) >= 0))) return { key, mapIndex: mapIndex as number | null };
  } catch {
    // fall through
  }
  throw new ValidationError("after", "not a cursor of a DAG run's tasks returned by this API (use tasks.pageInfo.endCursor)");
}

export function taskRowsPageSize(first: number): number {
  if (!Number.isInteger(first) || first < 1 || first > MAX_TASK_ROWS) throw new ValidationError("first", `must be from 1 to ${MAX_TASK_ROWS} (got ${first})`);
  return first;
}

/** Where the page after `after` starts in `rows`, and where it ends (exclusive). */
export function taskRowPage(rows: readonly TaskRowId[], size: number, after: string | null | undefined): { start: number; end: number; hasNextPage: boolean } {
  let start = 0;
  if (after) {
    const c = decodeTaskRowCursor(after);
    // The rows of one task are together (the task, then its instances by index): the page starts
    // at the first of them past the cursor's instance, else at the next task's first row.
    let found = false;
    for (; start < rows.length; start++) {
      const r = rows[start]!;
      if (r.key === c.key) {
        found = true;
        if ((r.mapIndex ?? -1) > (c.mapIndex ?? -1)) break;
      } else if (found) break;
    }
    if (!found) throw new ValidationError("after", `names task ${JSON.stringify(c.key)}, which this DAG run does not have (a cursor of another DAG run's tasks?)`);
  }
  const end = Math.min(rows.length, start + size);
  return { start, end, hasNextPage: end < rows.length };
}
