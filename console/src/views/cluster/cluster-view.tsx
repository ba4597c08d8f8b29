/**
 * The cluster's figures (clusterStatsUpdated: pushed at once and every 5 s, one computation on the
 * server for all who watch the same window) and the load forecast (forecast: runs due per pool and
 * hour, with the hotspots and what to do about them). An administrator sees the cluster; anyone
 * else their own runs and jobs (docs/cluster-stats.md). The nodes are a page of 50 by name
 * (clusterStats.nodes, the `nodes` query's order): Previous/Next subscribe again for another page.
 */
import { useState } from "react";
import { useQuery, useSubscription } from "urql";
import { Link } from "wouter";
import { ConsoleClusterStatsDocument, ConsoleForecastDocument, type ConsoleClusterStatsSubscription, type ConsoleForecastQuery } from "../../../../generated/client/graphql";
import { ErrorLine, Loading, Page } from "../../ui/page";
import { useCursorStack } from "../../ui/paging";
import { Pager } from "../dags/pager";
import { duration, Time } from "../../ui/time";
import "./cluster.css";

type Stats = ConsoleClusterStatsSubscription["clusterStatsUpdated"];
type Forecast = ConsoleForecastQuery["forecast"];

const WINDOWS = ["PT15M", "PT1H", "PT6H", "PT24H"];
const OPEN = new Set(["PENDING", "QUEUED", "RUNNING", "RETRY_SCHEDULED"]);
/** Nodes a page: a subscription's cost is paid at every push, and 50 rows keep it under KAIROS_MAX_SUBSCRIPTION_COST (1,000). */
const NODES_PAGE = 50;

type NodePages = ReturnType<typeof useCursorStack>;

export function ClusterView() {
  const [window, setWindow] = useState("PT1H");
  const nodePages = useCursorStack();
  const [{ data, error }] = useSubscription({ query: ConsoleClusterStatsDocument, variables: { window, nodesFirst: NODES_PAGE, nodesAfter: nodePages.after } });
  const stats = data?.clusterStatsUpdated ?? null;
  return (
    <Page
      title="Cluster"
      actions={
        <label>
          Window{" "}
          <select value={window} onChange={(e) => setWindow(e.target.value)}>
            {WINDOWS.map((w) => <option key={w} value={w}>{w.replace("PT", "").toLowerCase()}</option>)}
          </select>
        </label>
      }
    >
      <ErrorLine error={error} />
      {stats ? <Figures stats={stats} nodePages={nodePages} /> : !error && <Loading what="Loading the figures" />}
      <ForecastPanel />
    </Page>
  );
}

function Figures({ stats: s, nodePages }: { stats: Stats; nodePages: NodePages }) {
  const count = (open: boolean) => s.runs.filter((r) => OPEN.has(r.status) === open);
  const nodes = s.nodes.edges.map((e) => e.node);
  const hasNext = s.nodes.pageInfo.hasNextPage;
  // Every page before this one was full.
  const from = (nodePages.page - 1) * NODES_PAGE + 1;
  return (
    <>
      <p className="muted">
        {s.scope === "CLUSTER" ? "The whole cluster" : "Your runs"} over the last {s.window}, as of <Time iso={s.at} />; updated every 5 s.
      </p>
      <div className="grid2">
        <section aria-labelledby="cluster-runs">
          <h2 id="cluster-runs">Runs</h2>
          <dl className="facts">
            {count(true).map((r) => [<dt key={`t${r.status}`}>{r.status} now</dt>, <dd key={`d${r.status}`}>{r.count}</dd>])}
            <dt>Ended</dt>
            <dd>{s.ended} ({s.throughput}/s){s.endedCapped ? ", the newest 100,000 counted" : ""}</dd>
            {count(false).map((r) => [<dt key={`t${r.status}`}>{r.status}</dt>, <dd key={`d${r.status}`}>{r.count}</dd>])}
          </dl>
        </section>
        <section aria-labelledby="cluster-lateness">
          <h2 id="cluster-lateness">Lateness and dead letters</h2>
          <dl className="facts">
            <dt>Start lateness p50</dt>
            <dd>{duration(s.lateness.p50Ms)}</dd>
            <dt>p99</dt>
            <dd>{duration(s.lateness.p99Ms)}</dd>
            <dt>Over</dt>
            <dd>{s.lateness.samples} runs{s.lateness.capped ? " (the newest)" : ""}</dd>
            <dt>Dead letters</dt>
            <dd>{s.deadLetters} kept, {s.deadLettersInWindow} in the window</dd>
          </dl>
        </section>
      </div>
      <h2 id="cluster-pools">Queues</h2>
      {s.pools.length === 0 ? (
        <p className="muted">Nothing is waiting.</p>
      ) : (
        <table aria-labelledby="cluster-pools">
          <thead><tr><th scope="col">Pool</th><th scope="col">Waiting</th><th scope="col">Oldest wait</th></tr></thead>
          <tbody>
            {s.pools.map((p) => (
              <tr key={p.pool}><td>{p.pool}</td><td>{p.depth}</td><td>{p.oldestWaitMs === null ? "–" : duration(p.oldestWaitMs)}</td></tr>
            ))}
          </tbody>
        </table>
      )}
      <h2 id="cluster-nodes">Nodes</h2>
      <p className="muted" aria-label="Capacity">
        {s.capacity.nodes} live {s.capacity.nodes === 1 ? "node" : "nodes"}: {s.capacity.running} / {s.capacity.slots} slots running, {s.capacity.allocatedCpu} / {s.capacity.cpus} CPU and{" "}
        {s.capacity.allocatedMemoryMb} / {s.capacity.memoryMb} MB reserved.
      </p>
      {(hasNext || nodePages.hasPrev) && nodes.length > 0 && (
        <p role="status">
          Showing nodes {from}–{from + nodes.length - 1} of {s.nodeCount} by name (the capacity above counts them all); <Link href="/nodes">Nodes</Link> filters them by pool and state.
        </p>
      )}
      <table aria-labelledby="cluster-nodes">
        <thead><tr><th scope="col">Node</th><th scope="col">Status</th><th scope="col">Running</th><th scope="col">CPU reserved</th><th scope="col">Memory reserved</th></tr></thead>
        <tbody>
          {nodes.map((n) => (
            <tr key={n.id}>
              <td>{n.name}</td><td>{n.status}</td><td>{n.running} / {n.slots}</td><td>{n.allocatedCpu} / {n.cpus}</td><td>{n.allocatedMemoryMb} / {n.memoryMb} MB</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager label="Cluster nodes pages" page={nodePages.page} hasPrev={nodePages.hasPrev} hasNext={hasNext} onPrev={nodePages.prev} onNext={() => nodePages.next(s.nodes.pageInfo)} />
      {s.schedulers && (
        <>
          <h2 id="cluster-schedulers">Schedulers</h2>
          <table aria-labelledby="cluster-schedulers">
            <thead><tr><th scope="col">Scheduler</th><th scope="col">Shards held</th></tr></thead>
            <tbody>
              {s.schedulers.map((m) => <tr key={m.id}><td>{m.id}</td><td>{m.shards.length} of {s.shardCount}: {ranges(m.shards)}</td></tr>)}
            </tbody>
          </table>
          {(s.unownedShards?.length ?? 0) > 0 && <p role="alert" className="error">{s.unownedShards!.length} shards are held by no scheduler: {ranges(s.unownedShards!)}</p>}
        </>
      )}
    </>
  );
}

function ForecastPanel() {
  const [within, setWithin] = useState("PT24H");
  const [{ data, error, fetching }] = useQuery({ query: ConsoleForecastDocument, variables: { within }, requestPolicy: "network-only" });
  const f = data?.forecast ?? null;
  return (
    <section aria-labelledby="cluster-forecast">
      <div className="cluster-head">
        <h2 id="cluster-forecast">Forecast</h2>
        <label>
          Next{" "}
          <select value={within} onChange={(e) => setWithin(e.target.value)}>
            <option value="PT6H">6 hours</option>
            <option value="PT24H">24 hours</option>
          </select>
        </label>
      </div>
      <ErrorLine error={error} />
      {!f ? (fetching && <Loading what="Forecasting" />) : <ForecastFigures f={f} />}
    </section>
  );
}

function ForecastFigures({ f }: { f: Forecast }) {
  const from = Date.parse(f.from);
  const hours = Math.max(1, Math.ceil((Date.parse(f.to) - from) / 3_600_000));
  return (
    <>
      <p className="muted">
        Runs due from <Time iso={f.from} /> to <Time iso={f.to} />, from {f.jobsRead} {f.scope === "CLUSTER" ? "jobs of the cluster" : "of your jobs"}.
      </p>
      {f.pools.length === 0 && <p className="muted">No runs due.</p>}
      {f.pools.length > 0 && (
        <table aria-label="Runs due per pool">
          <thead><tr><th scope="col">Pool</th><th scope="col">Runs</th><th scope="col">Busiest minute</th><th scope="col">Each hour</th></tr></thead>
          <tbody>
            {f.pools.map((p) => {
              const perHour = new Array<number>(hours).fill(0);
              for (const m of p.minutes) perHour[Math.min(hours - 1, Math.floor((Date.parse(m.at) - from) / 3_600_000))] += m.runs;
              return (
                <tr key={p.pool}>
                  <td>{p.pool}</td>
                  <td>{p.total}</td>
                  <td>{p.peak} at <Time iso={p.peakAt} /></td>
                  <td><HourBars pool={p.pool} perHour={perHour} /></td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {f.hotspots.length > 0 && (
        <>
          <h3>Hotspots</h3>
          <ul className="cluster-hotspots">
            {f.hotspots.map((h) => (
              <li key={`${h.pool}@${h.at}`}>
                <strong>{h.pool}</strong>, {h.minutes.length} {h.minutes.length === 1 ? "minute" : "minutes"} from <Time iso={h.at} />: {h.suggestion}
                <details>
                  <summary>{h.jobCount} jobs</summary>
                  <p>{h.jobIds.join(", ")}{h.jobCount > h.jobIds.length ? ` and ${h.jobCount - h.jobIds.length} more` : ""}</p>
                </details>
              </li>
            ))}
          </ul>
        </>
      )}
      {f.notes.map((n) => <p key={n} className="muted">{n}</p>)}
    </>
  );
}

/** Runs due each hour as bars (their figures in the label and each bar's title). */
function HourBars({ pool, perHour }: { pool: string; perHour: number[] }) {
  const top = Math.max(1, ...perHour);
  const w = 6;
  const h = 24;
  return (
    <svg className="cluster-bars" width={perHour.length * w} height={h} role="img" aria-label={`${pool}: runs due each hour: ${perHour.map((n) => Math.round(n)).join(", ")}`}>
      {perHour.map((n, i) => {
        const bh = n === 0 ? 0 : Math.max(1, (n / top) * h);
        return <rect key={i} x={i * w} y={h - bh} width={w - 1} height={bh}><title>{`hour ${i + 1}: ${Math.round(n)} runs`}</title></rect>;
      })}
    </svg>
  );
}

/** 0,1,2,3,7,8 → "0–3, 7–8". */
function ranges(ns: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < ns.length; ) {
    let j = i;
    while (j + 1 < ns.length && ns[j + 1] === ns[j] + 1) j++;
    out.push(j === i ? String(ns[i]) : `${ns[i]}–${ns[j]}`);
    i = j + 1;
  }
  return out.join(", ") || "none";
}
