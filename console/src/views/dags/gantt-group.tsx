/**
 * A mapped task in the timeline: one summary row (instances by state, first start → last end, and a
 * mini histogram of how many instances ran over time) that expands on click to every instance, in a
 * virtualized list: only the rows in view (and a few around) are rendered, so 1,000 stay fast.
 */
import { useId, useState, type UIEvent } from "react";
import { duration } from "../../ui/time";
import { TaskRow } from "./gantt";
import { look, STATE_ORDER } from "./states";
import { countStates, type Cell } from "./task-cells";
import { barBox, type Scale } from "./timeline-scale";

const ROW_H = 30;
const VISIBLE = 12;
const OVERSCAN = 6;
const BUCKETS = 48;

export function GanttGroup({ taskKey, cell, instances, scale, now }: { taskKey: string; cell?: Cell; instances: Map<number, Cell>; scale: Scale; now: number }) {
  const [open, setOpen] = useState(false);
  const listId = useId();
  const all = [...instances];
  const counts = countStates(instances.values());
  let first: number | null = null;
  let last: number | null = null;
  const spans: Array<[number, number]> = [];
  for (const [, c] of all) {
    const s = c.startedAt ? Date.parse(c.startedAt) : null;
    if (s === null) continue;
    const e = c.finishedAt ? Date.parse(c.finishedAt) : ["SUCCEEDED", "FAILED", "CANCELLED"].includes(c.status) ? s : now;
    first = first === null ? s : Math.min(first, s);
    last = last === null ? e : Math.max(last, e);
    spans.push([s, e]);
  }
  const l = look(cell?.status);
  const took = first !== null && last !== null ? duration(last - first) : "—";
  const summary = STATE_ORDER.filter((s) => counts.get(s)).map((s) => `${counts.get(s)} ${look(s).word}`).join(", ");

  return (
    <div className="gantt-group" data-group={taskKey} data-count={all.length}>
      <div className="gantt-row gantt-group-row" data-row={taskKey} data-state={cell?.status ?? ""}>
        <span className="gantt-name">
          <button type="button" className="linkish gantt-toggle" aria-expanded={open} aria-controls={listId} onClick={() => setOpen((o) => !o)} disabled={all.length === 0}>
            <span aria-hidden="true">{open ? "▾" : "▸"} </span>
            {taskKey}
            <span className="muted"> ×{all.length}</span>
          </button>
        </span>
        <span>
          <span className={`badge tone-${l.tone === "none" ? "muted" : l.tone}`}>
            <span aria-hidden="true">{l.icon} </span>
            {l.word}
          </span>
        </span>
        <span className="gantt-took">{took}</span>
        <span className="gantt-track">
          <span className="dag-sr">{all.length ? `${all.length} instances: ${summary}` : "not expanded yet"}</span>
          <span className="gantt-counts" aria-hidden="true">
            {STATE_ORDER.filter((s) => counts.get(s)).map((s) => (
              <span key={s} className={`gantt-count st-${look(s).tone}`} title={`${counts.get(s)} ${look(s).word}`}>{look(s).icon} {counts.get(s)}</span>
            ))}
          </span>
          {first !== null && last !== null && <Histogram spans={spans} from={first} to={last} scale={scale} />}
        </span>
      </div>
      {open && <InstanceList id={listId} taskKey={taskKey} rows={all} scale={scale} now={now} />}
    </div>
  );
}

/** How many instances ran in each slice of [from, to], as columns inside the group's bar. */
function Histogram({ spans, from, to, scale }: { spans: Array<[number, number]>; from: number; to: number; scale: Scale }) {
  const width = Math.max(1, to - from);
  const n = new Array<number>(BUCKETS).fill(0);
  for (const [s, e] of spans) {
    const a = Math.floor(((s - from) / width) * BUCKETS);
    const b = Math.min(BUCKETS - 1, Math.floor(((e - from) / width) * BUCKETS));
    for (let i = Math.max(0, a); i <= b; i++) n[i]++;
  }
  const max = Math.max(1, ...n);
  return (
    <span className="gantt-hist" aria-hidden="true" style={barBox(scale, from, to)} title={`${spans.length} started; at most ${max} at once`}>
      {n.map((v, i) => (
        <span key={i} style={{ height: `${(v / max) * 100}%` }} />
      ))}
    </span>
  );
}

function InstanceList({ id, taskKey, rows, scale, now }: { id: string; taskKey: string; rows: Array<[number, Cell]>; scale: Scale; now: number }) {
  const [top, setTop] = useState(0);
  const onScroll = (e: UIEvent<HTMLDivElement>) => setTop(e.currentTarget.scrollTop);
  const from = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
  const to = Math.min(rows.length, Math.ceil(top / ROW_H) + VISIBLE + OVERSCAN);
  const height = Math.min(rows.length, VISIBLE) * ROW_H;
  return (
    <div
      id={id}
      className="gantt-instances"
      style={{ height: `${height}px` }}
      onScroll={onScroll}
      tabIndex={0}
      role="region"
      aria-label={`${rows.length} instances of ${taskKey} (scroll for more)`}
      data-instances={taskKey}
    >
      <div className="gantt-instances-inner" style={{ height: `${rows.length * ROW_H}px` }}>
        {rows.slice(from, to).map(([index, c], i) => (
          <TaskRow
            key={index}
            taskKey={taskKey}
            label={`${taskKey}[${index}]`}
            cell={c}
            scale={scale}
            now={now}
            className="gantt-instance"
            style={{ top: `${(from + i) * ROW_H}px` }}
          />
        ))}
      </div>
    </div>
  );
}
