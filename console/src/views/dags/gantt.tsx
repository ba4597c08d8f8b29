/**
 * The timeline (Gantt) of one DAG run: a row per task in the graph's order, a bar from its run's
 * start to its end (to now while it runs), on a shared time axis. A mapped task is one summary
 * row (instances by state, first start → last end, how many ran at once over time) that expands to
 * its instances in a virtualized list, so 1,000 instances stay readable and fast.
 */
import { Link } from "wouter";
import { duration } from "../../ui/time";
import { GanttGroup } from "./gantt-group";
import { look } from "./states";
import type { Cell, CellBook } from "./task-cells";
import { barBox, makeScale, type Scale } from "./timeline-scale";

export interface GanttProps {
  runId: string;
  order: readonly string[];
  book: CellBook;
  mapped: ReadonlySet<string>;
  /** The DAG run's creation and end (ISO), and now (ms) for bars still open. */
  createdAt: string;
  finishedAt: string | null;
  now: number;
}

const ms = (iso: string | null | undefined) => (iso ? Date.parse(iso) : null);

export function Gantt(p: GanttProps) {
  let t0 = Date.parse(p.createdAt);
  let t1 = ms(p.finishedAt) ?? p.now;
  const cells: Array<{ key: string; cell?: Cell; instances?: Map<number, Cell> }> = p.order.map((key) =>
    p.mapped.has(key) ? { key, cell: p.book.task(p.runId, key), instances: p.book.instances(p.runId, key) } : { key, cell: p.book.task(p.runId, key) },
  );
  for (const c of cells) {
    for (const x of c.instances ? c.instances.values() : [c.cell]) {
      const s = ms(x?.startedAt);
      if (s !== null) t0 = Math.min(t0, s);
      const e = ms(x?.finishedAt);
      if (e !== null) t1 = Math.max(t1, e);
    }
  }
  const scale = makeScale(t0, Math.max(t1, t0 + 1000));
  return (
    <div className="gantt" role="region" aria-label="Timeline of this DAG run: each task's run from start to end">
      <div className="gantt-row gantt-head">
        <span>Task</span>
        <span>State</span>
        <span className="gantt-took">Took</span>
        <span className="gantt-track gantt-axis">
          <span className="dag-sr">Time since the DAG run began</span>
          {scale.ticks.map((t) => (
            <span key={t.pct} className="gantt-tick" aria-hidden="true" style={{ left: `${t.pct}%` }}>{t.label}</span>
          ))}
        </span>
      </div>
      {cells.map((c) =>
        c.instances ? (
          <GanttGroup key={c.key} taskKey={c.key} cell={c.cell} instances={c.instances} scale={scale} now={p.now} />
        ) : (
          <TaskRow key={c.key} taskKey={c.key} cell={c.cell} scale={scale} now={p.now} />
        ),
      )}
    </div>
  );
}

export function TaskRow({ taskKey, label, cell, scale, now, className, style }: {
  taskKey: string;
  label?: string;
  cell?: Cell;
  scale: Scale;
  now: number;
  className?: string;
  style?: { top: string };
}) {
  const l = look(cell?.status);
  const start = ms(cell?.startedAt);
  const end = ms(cell?.finishedAt) ?? (start !== null && cell && !["SUCCEEDED", "FAILED", "CANCELLED"].includes(cell.status) ? now : null);
  const took = start !== null && end !== null ? duration(end - start) : "—";
  const name = label ?? taskKey;
  return (
    <div className={`gantt-row ${className ?? ""}`} data-row={name} data-state={cell?.status ?? ""} style={style}>
      <span className="gantt-name">
        {cell?.runId ? <Link href={`/runs/${cell.runId}`} title={`${taskKey}: its run`}>{name}</Link> : <span>{name}</span>}
        {cell?.note && <span className="gantt-note" title={cell.note}>{cell.note}</span>}
      </span>
      <span>
        <span className={`badge tone-${l.tone === "none" ? "muted" : l.tone}`}>
          <span aria-hidden="true">{l.icon} </span>
          {l.word}
        </span>
      </span>
      <span className="gantt-took">{took}</span>
      <span className="gantt-track">
        {start !== null && end !== null && (
          <span className={`gantt-bar st-${l.tone}`} data-bar={name} aria-hidden="true" title={`${name}: ${l.word}, ${took}`} style={barBox(scale, start, end)} />
        )}
      </span>
    </div>
  );
}
