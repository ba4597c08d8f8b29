/**
 * One DAG: its graph coloured live by a DAG run's task states (the latest, or the one picked in the
 * grid), the grid of its latest DAG runs × tasks, trigger with params, pause / resume, and its DAG
 * runs. Live through dagRunUpdated(dagId); nothing reloads the page.
 */
import { useMemo, useState } from "react";
import { Link } from "wouter";
import { useMutation, useQuery } from "urql";
import { ConsoleDagDocument, PauseDagDocument, ResumeDagDocument, type DagTaskState } from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";
import { ErrorLine, Loading, Page } from "../../ui/page";
import { StatusBadge } from "../../ui/status";
import { Time } from "../../ui/time";
import { DagGraph, type NodeState } from "./dag-graph";
import { DagRunsTable } from "./dag-runs-table";
import { layoutDag } from "./layout";
import { RunGrid } from "./run-grid";
import { ScheduleWords } from "./schedule-words";
import { countStates } from "./task-cells";
import { TriggerForm } from "./trigger-form";
import { useDagRuns } from "./use-dag-runs";
import "./dags.css";

const GRID_RUNS = 12;

/** Keyed by id: another DAG's page starts afresh (its own live state), also when only the address's id changes. */
export function DagView({ id }: { id: string }) {
  return <DagViewPage key={id} id={id} />;
}

function DagViewPage({ id }: { id: string }) {
  const [q] = useQuery({ query: ConsoleDagDocument, variables: { id } });
  const dag = q.data?.dag;
  const live = useDagRuns(id, GRID_RUNS);
  const [picked, setPicked] = useState<string | null>(null);
  const [pauseRes, pause] = useMutation(PauseDagDocument);
  const [resumeRes, resume] = useMutation(ResumeDagDocument);

  const tasks = dag?.tasks ?? [];
  const order = useMemo(() => layoutDag(tasks).order, [tasks]);
  const mapped = useMemo(() => new Set(tasks.filter((t) => t.mapOver).map((t) => t.key)), [tasks]);
  const shown = picked && live.runs?.some((r) => r.id === picked) ? picked : live.runs?.[0]?.id ?? null;
  const shownRun = live.runs?.find((r) => r.id === shown);

  // live.version changes whenever the book does: the graph reads the book afresh.
  const states = useMemo(() => {
    void live.version;
    return (key: string): NodeState => {
      if (!shown) return {};
      const c = live.book.task(shown, key);
      const s: NodeState = { status: (c?.status ?? null) as DagTaskState | null };
      if (mapped.has(key)) s.instances = countStates(live.book.instances(shown, key).values());
      return s;
    };
  }, [live.book, live.version, shown, mapped]);

  if (q.error) return <Page title="DAG"><ErrorLine error={q.error} /><p><Link href="/dags">All DAGs</Link></p></Page>;
  if (!dag) return <Page title="DAG"><Loading /></Page>;

  const actions = (
    <>
      {dag.paused ? (
        <button type="button" onClick={() => void resume({ id })} disabled={resumeRes.fetching}>Resume schedule</button>
      ) : (
        <button type="button" onClick={() => void pause({ id })} disabled={pauseRes.fetching}>Pause schedule</button>
      )}
      <a className="button" href="#dag-runs">DAG runs</a>
      <Link className="button" href={`/runs?dag=${encodeURIComponent(id)}`}>Task runs</Link>
    </>
  );

  return (
    <Page title={dag.name} actions={actions}>
      <ErrorLine error={pauseRes.error ? errorText(pauseRes.error) : resumeRes.error ? errorText(resumeRes.error) : null} />
      {dag.warnings.map((w) => <p key={w} className="notice">{w}</p>)}
      <div className="grid2 dag-top">
        <section className="card" aria-label="About this DAG">
          {dag.description && <p>{dag.description}</p>}
          <dl className="facts">
            <dt>Schedule</dt>
            <dd>{dag.schedule ? <ScheduleWords schedule={dag.schedule} /> : "none: triggered only"}</dd>
            <dt>State</dt>
            <dd><StatusBadge status={dag.paused ? "PAUSED" : "ACTIVE"} label={dag.paused ? "paused" : "active"} /></dd>
            <dt>Next fire</dt>
            <dd><Time iso={dag.nextFireAt} /></dd>
            <dt>Version</dt>
            <dd>{dag.version}</dd>
            <dt>Tasks</dt>
            <dd>{dag.tasks.length}{mapped.size > 0 ? ` (${mapped.size} mapped)` : ""}</dd>
            <dt>Limits</dt>
            <dd>{dag.maxParallel ? `at most ${dag.maxParallel} at once` : "no parallel limit"}{dag.failFast ? "; fail fast" : ""}; overlap {dag.overlap.toLowerCase()}</dd>
          </dl>
        </section>
        <TriggerForm dagId={id} defaults={dag.params} onTriggered={() => live.reload()} />
      </div>

      <h2 id="dag-graph-h">Graph</h2>
      <p className="muted dag-graph-note" aria-live="polite">
        {shownRun ? (
          <>Coloured by the DAG run of <Time iso={shownRun.createdAt} /> (<Link href={`/dag-runs/${shownRun.id}`}>{shownRun.status.toLowerCase()}</Link>){picked ? "" : ", the latest"}; pick another in the grid.</>
        ) : live.runs ? "No DAG run yet: the tasks are shown without state." : "Reading its DAG runs…"}
      </p>
      {shownRun && shownRun.dagVersion !== dag.version && (
        <p className="notice">
          That DAG run ran version {shownRun.dagVersion}; this is version {dag.version}. <Link href={`/dag-runs/${shownRun.id}`}>Its own page</Link> draws the graph it ran.
        </p>
      )}
      <DagGraph tasks={tasks} states={states} label={`Graph of ${dag.name}`} />

      <h2>Grid</h2>
      <ErrorLine error={live.error} />
      {live.runs ? (
        <RunGrid runs={live.runs} order={order} book={live.book} mapped={mapped} selected={shown} onSelect={setPicked} />
      ) : (
        <Loading what="Reading its DAG runs" />
      )}

      <h2 id="dag-runs">DAG runs</h2>
      <DagRunsTable dagId={id} />
    </Page>
  );
}
