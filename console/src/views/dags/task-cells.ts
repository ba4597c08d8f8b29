/**
 * The state of each task (and mapped instance) of DAG runs, merged from two sources: pages read
 * from the API (the base) and the dagRunUpdated events since (the patches). Either may be the newer
 * (a page read after an event, an event after a page), so the cell further along wins: the higher
 * attempt (a retry from failed starts a new one), then the later phase (pending, queued, active,
 * ended); on a tie the event, which is the latest word on its task (each task's events come in order).
 */
import type { DagTaskState } from "../../../../generated/client/graphql";

export interface Cell {
  status: DagTaskState;
  attempt: number;
  runId?: string | null;
  /** From the event's time when no page has said yet (ISO). */
  startedAt?: string | null;
  finishedAt?: string | null;
  /** Why it ended without running, when the API says. */
  note?: string | null;
}

const PHASE: Record<string, number> = { PENDING: 0, QUEUED: 1, RUNNING: 2, RETRYING: 2, SUCCEEDED: 3, FAILED: 3, UPSTREAM_FAILED: 3, SKIPPED: 3, CANCELLED: 3 };

export const rowKey = (key: string, mapIndex: number | null | undefined) => (mapIndex == null ? key : `${key}#${mapIndex}`);

/** The newer of a page's cell and an event's cell. */
export function newer(base: Cell | undefined, patch: Cell | undefined): Cell | undefined {
  if (!base) return patch;
  if (!patch) return base;
  if (patch.attempt !== base.attempt) return patch.attempt > base.attempt ? patch : base;
  if ((PHASE[base.status] ?? 0) > (PHASE[patch.status] ?? 0)) return base;
  // The event's state, with the page's exact times and run where the event has none.
  return { ...patch, runId: patch.runId ?? base.runId, startedAt: base.startedAt ?? patch.startedAt, finishedAt: base.finishedAt ?? patch.finishedAt, note: base.note };
}

/** Applies an event to a patch: its state, run and (estimated) times. */
export function patched(prev: Cell | undefined, ev: { status: DagTaskState; attempt: number; runId?: string | null; at: string }): Cell {
  const sameAttempt = prev && prev.attempt === ev.attempt;
  const next: Cell = { status: ev.status, attempt: ev.attempt, runId: ev.runId ?? (sameAttempt ? prev?.runId : null) };
  next.startedAt = sameAttempt ? prev?.startedAt ?? null : null;
  next.finishedAt = null;
  if (ev.status === "RUNNING" && !next.startedAt) next.startedAt = ev.at;
  // Its end, also when its start is known only from a page (merged in `newer`); a task that never
  // ran has no start, so no bar either way.
  if ((PHASE[ev.status] ?? 0) === 3) next.finishedAt = ev.at;
  return next;
}

/** Counts of instances by state. */
export function countStates(cells: Iterable<Cell | undefined>): Map<DagTaskState, number> {
  const m = new Map<DagTaskState, number>();
  for (const c of cells) if (c) m.set(c.status, (m.get(c.status) ?? 0) + 1);
  return m;
}

/** One task's cells in one DAG run: its own row, and a mapped task's instances by index. */
export interface TaskCells {
  task?: Cell;
  instances: Map<number, Cell>;
}

export interface Row {
  key: string;
  mapIndex?: number | null;
  /** A mapped task's own row (its instances follow it). */
  mapped?: boolean;
  status: DagTaskState;
  attempt: number;
  note?: string | null;
  run?: { id: string; startedAt?: string | null; finishedAt?: string | null } | null;
}

/**
 * Cells of several DAG runs: the base (pages read) and the patches (events), merged on reading.
 * A mutable book: the hooks that own it re-render after changing it.
 */
export class CellBook {
  private base = new Map<string, Map<string, TaskCells>>();
  private patch = new Map<string, Map<string, TaskCells>>();

  has(runId: string): boolean {
    return this.base.has(runId);
  }

  /** Replaces a DAG run's base with a complete read of its rows. */
  setBase(runId: string, rows: readonly Row[]): void {
    const m = new Map<string, TaskCells>();
    for (const r of rows) {
      const cell: Cell = { status: r.status, attempt: r.attempt, note: r.note ?? null, runId: r.run?.id ?? null, startedAt: r.run?.startedAt ?? null, finishedAt: r.run?.finishedAt ?? null };
      const t = m.get(r.key) ?? m.set(r.key, { instances: new Map() }).get(r.key)!;
      if (r.mapIndex == null) t.task = cell;
      else t.instances.set(r.mapIndex, cell);
    }
    this.base.set(runId, m);
  }

  /** Applies an event of one task instance. */
  apply(runId: string, ev: { key: string; mapIndex?: number | null; status: DagTaskState; attempt: number; runId?: string | null; at: string }): void {
    const m = this.patch.get(runId) ?? this.patch.set(runId, new Map()).get(runId)!;
    const t = m.get(ev.key) ?? m.set(ev.key, { instances: new Map() }).get(ev.key)!;
    if (ev.mapIndex == null) t.task = patched(t.task, ev);
    else t.instances.set(ev.mapIndex, patched(t.instances.get(ev.mapIndex), ev));
  }

  task(runId: string, key: string): Cell | undefined {
    return newer(this.base.get(runId)?.get(key)?.task, this.patch.get(runId)?.get(key)?.task);
  }

  /** A mapped task's instances, by index, merged. */
  instances(runId: string, key: string): Map<number, Cell> {
    const b = this.base.get(runId)?.get(key)?.instances;
    const p = this.patch.get(runId)?.get(key)?.instances;
    if (!p || p.size === 0) return b ?? new Map();
    const out = new Map(b ?? []);
    for (const [i, c] of p) out.set(i, newer(out.get(i), c)!);
    return new Map([...out].sort((a, z) => a[0] - z[0]));
  }

  forget(runId: string): void {
    this.base.delete(runId);
    this.patch.delete(runId);
  }
}
