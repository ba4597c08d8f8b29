/**
 * The fire ledger as a heatmap: one cell per schedule slot, oldest to newest, coloured by outcome,
 * each with its outcome, slot time, lateness and reason in words (title and screen-reader text).
 * A legend counts each outcome; a toggle shows the same ledger as a table.
 */
import { useEffect, useState } from "react";
import { Link } from "wouter";
import { useClient, useQuery } from "urql";
import { ConsoleJobFiresDocument, type ConsoleJobFiresQuery } from "../../../../generated/client/graphql";
import { ErrorLine, Loading } from "../../ui/page";
import { useRovingCells } from "../../ui/roving-cells";
import { duration } from "../../ui/time";
import { CELLS, cellLabel, cellOf, inYourZone, type Cell } from "./fires";

type Fire = ConsoleJobFiresQuery["job"]["fires"]["edges"][number]["node"];

/** The API serves at most 100 slots a page; older pages load on request. */
const PAGE = 100;
const MOST = 1000;

function describe(f: Fire): string {
  const c = cellOf(f);
  const parts = [`${cellLabel(c)}: slot ${inYourZone(f.slotAt)}`];
  if (f.latenessMs != null && f.latenessMs > 0) parts.push(`${duration(f.latenessMs)} late`);
  if (f.reason) parts.push(f.reason);
  return parts.join(" · ");
}

export function FireHeatmap({ jobId, refresh }: { jobId: string; refresh: number }) {
  const [asTable, setAsTable] = useState(false);
  const [res, reexecute] = useQuery({ query: ConsoleJobFiresDocument, variables: { id: jobId, first: PAGE } });
  useEffect(() => {
    if (refresh > 0) reexecute({ requestPolicy: "network-only" });
  }, [refresh, reexecute]);

  const client = useClient();
  const [older, setOlder] = useState<{ fires: Fire[]; next: string | null; error: string | null; loading: boolean }>({ fires: [], next: null, error: null, loading: false });
  const firstPage = res.data?.job.fires;
  const nextCursor = older.fires.length > 0 ? older.next : firstPage?.pageInfo.hasNextPage ? firstPage.pageInfo.endCursor : null;
  async function loadOlder() {
    if (!nextCursor) return;
    setOlder((o) => ({ ...o, loading: true }));
    const r = await client.query(ConsoleJobFiresDocument, { id: jobId, first: PAGE, after: nextCursor }, { requestPolicy: "network-only" }).toPromise();
    const page = r.data?.job.fires;
    setOlder((o) => ({
      fires: page ? [...o.fires, ...page.edges.map((e) => e.node)] : o.fires,
      next: page?.pageInfo.hasNextPage ? page.pageInfo.endCursor : null,
      error: r.error ? r.error.message : null,
      loading: false,
    }));
  }
  const seen = new Set<string>();
  const fires = [...(firstPage?.edges.map((e) => e.node) ?? []), ...older.fires].filter((f) => !seen.has(f.id) && !!seen.add(f.id));
  const oldestFirst = [...fires].reverse();
  const counts = new Map<Cell, number>();
  for (const f of fires) counts.set(cellOf(f), (counts.get(cellOf(f)) ?? 0) + 1);
  // One tab stop for the whole heatmap (the newest slot first); arrow keys move between slots.
  const keys = useRovingCells(oldestFirst.length);

  return (
    <section className="card" aria-labelledby="ledger-title">
      <div className="jobs-section-head">
        <h2 id="ledger-title">Fire ledger</h2>
        <label className="inline">
          <input type="checkbox" checked={asTable} onChange={(e) => setAsTable(e.target.checked)} />
          Show as a table
        </label>
      </div>
      <ErrorLine error={res.error} />
      {res.fetching && !res.data && <Loading what="Loading the ledger" />}
      {res.data && fires.length === 0 && <p className="muted">No slot has come due yet.</p>}
      {fires.length > 0 && (
        <>
          <p className="muted jobs-ledger-range">
            The last {fires.length} slot{fires.length === 1 ? "" : "s"}, oldest first.{" "}
            {nextCursor && fires.length < MOST && (
              <button type="button" onClick={loadOlder} disabled={older.loading}>{older.loading ? "Loading…" : "Show older slots"}</button>
            )}
          </p>
          <ErrorLine error={older.error} />
          <p id="ledger-keys" className="jobs-sr-only">In the heatmap, the arrow keys move between slots, Home and End to the oldest and the newest.</p>
          <ul className="jobs-legend" aria-label="Legend">
            {CELLS.map((c) => (
              <li key={c.cell} title={c.help}>
                <span className={`jobs-cell jobs-cell-${c.cell}`} aria-hidden="true" />
                {c.label} <span className="muted">({counts.get(c.cell) ?? 0})</span>
              </li>
            ))}
          </ul>
          {asTable ? <LedgerTable fires={fires} /> : (
            <ol className="jobs-heatmap" aria-label="Fire ledger, one cell per slot, oldest first" aria-describedby="ledger-keys" onKeyDown={keys.onKeyDown} onFocus={keys.onFocus}>
              {oldestFirst.map((f, i) => {
                const text = describe(f);
                return (
                  <li key={f.id} className={`jobs-cell jobs-cell-${cellOf(f)}`} title={text} data-outcome={cellOf(f)} tabIndex={keys.tabIndex(i)}>
                    <span className="jobs-sr-only">{text}</span>
                  </li>
                );
              })}
            </ol>
          )}
        </>
      )}
    </section>
  );
}

function LedgerTable({ fires }: { fires: Fire[] }) {
  return (
    <div className="table-wrap jobs-ledger-table">
      <table>
        <caption className="jobs-sr-only">Fire ledger, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Slot</th>
            <th scope="col">Outcome</th>
            <th scope="col">Late by</th>
            <th scope="col">Why</th>
            <th scope="col">Run</th>
          </tr>
        </thead>
        <tbody>
          {fires.map((f) => (
            <tr key={f.id}>
              <td><time dateTime={f.slotAt}>{inYourZone(f.slotAt)}</time></td>
              <td><span className={`badge jobs-badge-${cellOf(f)}`}>{cellLabel(cellOf(f))}</span></td>
              <td>{f.latenessMs != null ? duration(f.latenessMs) : "—"}</td>
              <td>{f.reason ?? <span className="muted">—</span>}</td>
              <td>{f.runId ? <Link href={`/runs/${f.runId}`}>{f.runId.slice(-8)}</Link> : <span className="muted">—</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
