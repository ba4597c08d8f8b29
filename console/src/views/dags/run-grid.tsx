/**
 * Airflow's grid: the latest DAG runs as columns (oldest left, newest right), the tasks as rows in
 * the graph's order, each cell the task's state in that DAG run (colour, icon, and the state in
 * its accessible name and tooltip), a link to the DAG run.
 */
import { Link } from "wouter";
import { relative } from "../../ui/time";
import { StatusBadge } from "../../ui/status";
import { look } from "./states";
import type { CellBook } from "./task-cells";
import type { DagRunSummary } from "./use-dag-runs";

const shortTime = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });

export function RunGrid({ runs, order, book, mapped, selected, onSelect }: {
  runs: readonly DagRunSummary[];
  order: readonly string[];
  book: CellBook;
  mapped: ReadonlySet<string>;
  selected: string | null;
  onSelect(id: string): void;
}) {
  const cols = [...runs].reverse();
  if (cols.length === 0) return <p className="muted">No DAG runs yet: trigger one above.</p>;
  return (
    <div className="table-wrap dag-grid-wrap" tabIndex={0} role="region" aria-label="Grid of recent DAG runs by task (scrollable)">
      <table className="dag-grid">
        <caption className="dag-sr">Each task's state in the latest {cols.length} DAG runs, oldest first</caption>
        <thead>
          <tr>
            <th scope="col">Task</th>
            {cols.map((r) => (
              <th key={r.id} scope="col" className={r.id === selected ? "sel" : undefined} data-dag-run={r.id}>
                <button type="button" className="linkish" aria-pressed={r.id === selected} title="Colour the graph by this DAG run" onClick={() => onSelect(r.id)}>
                  <StatusBadge status={r.status} label={look(r.status).icon} />
                  <span className="dag-grid-when">{shortTime.format(Date.parse(r.createdAt))}</span>
                  <span className="dag-sr">{`, ${r.status.toLowerCase()}, ${relative(Date.parse(r.createdAt))}`}</span>
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {order.map((key) => (
            <tr key={key}>
              <th scope="row" className="dag-grid-task">
                {key}
                {mapped.has(key) && <span className="muted"> [mapped]</span>}
              </th>
              {cols.map((r) => {
                const c = book.task(r.id, key);
                const l = look(c?.status);
                const when = shortTime.format(Date.parse(r.createdAt));
                return (
                  <td key={r.id} className={r.id === selected ? "sel" : undefined}>
                    <Link
                      href={`/dag-runs/${r.id}`}
                      className={`dag-cell st-${l.tone}`}
                      data-task={key}
                      data-dag-run={r.id}
                      data-state={c?.status ?? ""}
                      aria-label={`${key} in the DAG run of ${when}: ${c ? l.word : "not read yet"}`}
                      title={`${key} · ${when} · ${c ? l.word : "…"}`}
                    >
                      <span aria-hidden="true">{c ? l.icon : "…"}</span>
                    </Link>
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
