/**
 * The runs table: virtualized (only the rows in view are in the DOM), with a checkbox per row
 * (shift-click selects a range), infinite scroll and a "Load more" button for keyboards.
 */
import { memo, useCallback, useEffect, useLayoutEffect, useRef, useState, type MouseEvent } from "react";
import { Link } from "wouter";
import { StatusBadge } from "../../ui/status";
import { duration, useNow } from "../../ui/time";
import { useVirtualWindow } from "../../ui/virtual";
import type { RunRow } from "./use-run-list";

/** Fixed row height (px): runs.css keeps rows to it. */
export const ROW_HEIGHT = 40;
const COLUMNS = 11;

const when = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });

export function displayStatus(r: { status: string; cancelRequested: boolean }): string {
  return r.status === "RUNNING" && r.cancelRequested ? "CANCELLING" : r.status;
}

function At({ iso }: { iso: string | null }) {
  if (!iso) return <span className="muted">—</span>;
  return <time dateTime={iso} title={iso}>{when.format(Date.parse(iso))}</time>;
}

/**
 * A job's run links to its job; a DAG task's run (jobName `<DAG name>/<task key>`) to its DAG run,
 * shown as "DAG name › task key".
 */
function RunName({ r }: { r: RunRow }) {
  if (!r.dagRunId || !r.taskKey) return <Link href={`/jobs/${encodeURIComponent(r.jobId)}`}>{r.jobName}</Link>;
  const suffix = `/${r.taskKey}`;
  const dag = r.jobName.endsWith(suffix) ? r.jobName.slice(0, -suffix.length) : r.jobName;
  return <Link href={`/dag-runs/${encodeURIComponent(r.dagRunId)}`}>{dag} › {r.taskKey}</Link>;
}

/** Ids share their first half (a time stamp): their end tells them apart. */
export const shortId = (id: string) => (id.length > 12 ? `…${id.slice(-10)}` : id);

const Row = memo(function Row({ r, index, selected, now, onSelect }: { r: RunRow; index: number; selected: boolean; now: number | null; onSelect(index: number, e: MouseEvent<HTMLInputElement>): void }) {
  const ms = r.durationMs ?? (r.startedAt && !r.finishedAt && now ? now - Date.parse(r.startedAt) : null);
  return (
    <tr className={selected ? "vrow selected" : "vrow"} aria-rowindex={index + 2} data-run-id={r.id}>
      <td className="c-check">
        <input type="checkbox" checked={selected} onChange={() => undefined} onClick={(e) => onSelect(index, e)} aria-label={`Select run ${r.id} of ${r.jobName}`} />
      </td>
      <td className="c-status"><StatusBadge status={displayStatus(r)} /></td>
      <td className="c-job" title={r.jobName}><RunName r={r} /></td>
      <td className="c-id mono" title={r.id}><Link href={`/runs/${encodeURIComponent(r.id)}`} className="id-tail">{r.id}</Link></td>
      <td className="c-trigger">{r.trigger.toLowerCase()}</td>
      <td className="c-time"><At iso={r.scheduledFor} /></td>
      <td className="c-time"><At iso={r.startedAt} /></td>
      <td className="c-num">{ms == null ? <span className="muted">—</span> : duration(Math.max(0, ms))}</td>
      <td className="c-node" title={r.nodeId ?? undefined}>{r.node?.name ?? (r.nodeId ? <span className="mono">{shortId(r.nodeId)}</span> : <span className="muted">—</span>)}</td>
      <td className="c-num c-attempt">{r.attempt}/{r.maxAttempts}</td>
      <td className="c-num">{r.exitCode ?? <span className="muted">—</span>}</td>
    </tr>
  );
});

export function RunTable(props: {
  label: string;
  rows: RunRow[];
  selected: ReadonlySet<string>;
  onSelect(index: number, shift: boolean): void;
  onSelectAll(all: boolean): void;
  hasNext: boolean;
  loading: boolean;
  onEndReached(): void;
  empty: string;
}) {
  const { rows, selected } = props;
  const scroller = useRef<HTMLDivElement>(null);
  // The rows' and header's real heights (fonts and zoom vary): spacers must match them exactly.
  const [metrics, setMetrics] = useState({ row: ROW_HEIGHT, head: 38 });
  useLayoutEffect(() => {
    const el = scroller.current;
    const row = el?.querySelector("tr.vrow")?.getBoundingClientRect().height;
    const head = el?.querySelector("thead")?.getBoundingClientRect().height;
    if (row && head && (Math.abs(row - metrics.row) > 0.01 || Math.abs(head - metrics.head) > 0.5)) setMetrics({ row, head });
  });
  const win = useVirtualWindow(scroller, rows.length, metrics.row, { offset: metrics.head });
  const now = useNow(5_000);
  const anyRunning = rows.slice(win.start, win.end).some((r) => r.startedAt && !r.finishedAt);

  // Infinite scroll: near the end of what is loaded, load the next page.
  const { onEndReached, hasNext, loading } = props;
  useEffect(() => {
    if (hasNext && !loading && rows.length > 0 && win.end >= rows.length - 10) onEndReached();
  }, [win.end, rows.length, hasNext, loading, onEndReached]);

  const allSelected = rows.length > 0 && rows.every((r) => selected.has(r.id));
  const someSelected = !allSelected && rows.some((r) => selected.has(r.id));
  const onSelectRef = useRef(props.onSelect);
  onSelectRef.current = props.onSelect;
  const onRowSelect = useCallback((index: number, e: MouseEvent<HTMLInputElement>) => onSelectRef.current(index, e.shiftKey), []);

  return (
    <>
      <div className="table-wrap runs-scroll" ref={scroller} tabIndex={-1}>
        <table className="runs-table" aria-label={props.label} aria-rowcount={rows.length + 1}>
          <colgroup>
            <col className="w-check" /><col className="w-status" /><col className="w-job" /><col className="w-id" /><col className="w-trigger" />
            <col className="w-time" /><col className="w-time" /><col className="w-num" /><col className="w-node" /><col className="w-attempt" /><col className="w-exit" />
          </colgroup>
          <thead>
            <tr aria-rowindex={1}>
              <th scope="col" className="c-check">
                <IndeterminateBox checked={allSelected} indeterminate={someSelected} disabled={rows.length === 0} onChange={(v) => props.onSelectAll(v)} label={`Select all ${rows.length} loaded runs`} />
              </th>
              <th scope="col">Status</th>
              <th scope="col">Job</th>
              <th scope="col">Run</th>
              <th scope="col">Trigger</th>
              <th scope="col">Scheduled</th>
              <th scope="col">Started</th>
              <th scope="col">Duration</th>
              <th scope="col">Node</th>
              <th scope="col">Attempt</th>
              <th scope="col">Exit</th>
            </tr>
          </thead>
          <tbody>
            {win.before > 0 && <tr className="vspacer" aria-hidden="true"><td colSpan={COLUMNS} style={{ height: win.before }} /></tr>}
            {rows.slice(win.start, win.end).map((r, i) => (
              <Row key={r.id} r={r} index={win.start + i} selected={selected.has(r.id)} now={anyRunning ? now : null} onSelect={onRowSelect} />
            ))}
            {win.after > 0 && <tr className="vspacer" aria-hidden="true"><td colSpan={COLUMNS} style={{ height: win.after }} /></tr>}
          </tbody>
        </table>
        {rows.length === 0 && !props.loading && <p className="runs-empty muted">{props.empty}</p>}
      </div>
      <div className="runs-foot">
        <span className="muted" role="status">
          {props.loading && rows.length === 0
            ? "Loading runs…"
            : `${rows.length.toLocaleString()} run${rows.length === 1 ? "" : "s"} loaded${props.loading ? ", loading more…" : props.hasNext ? "" : ", no more"}`}
        </span>
        {props.hasNext && (
          <button type="button" onClick={() => props.onEndReached()} disabled={props.loading}>Load more</button>
        )}
      </div>
    </>
  );
}

function IndeterminateBox(props: { checked: boolean; indeterminate: boolean; disabled: boolean; label: string; onChange(v: boolean): void }) {
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (ref.current) ref.current.indeterminate = props.indeterminate;
  }, [props.indeterminate]);
  return <input ref={ref} type="checkbox" checked={props.checked} disabled={props.disabled} aria-label={props.label} onChange={(e) => props.onChange(e.target.checked)} />;
}
