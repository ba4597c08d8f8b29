/**
 * One DAG run: its graph coloured by its tasks' states and its timeline, both live
 * (dagRunUpdated(dagRunId)); why its tasks wait while it runs; cancel, and retry from failed, each
 * behind a confirmation; each task links to its run.
 */
import { useMemo, useState } from "react";
import { Link } from "wouter";
import { useMutation } from "urql";
import { CancelDagRunDocument, RetryDagRunDocument, type DagTaskState } from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";
import { Confirm } from "../../ui/confirm";
import { ErrorLine, Loading, Page } from "../../ui/page";
import { StatusBadge } from "../../ui/status";
import { duration, Time, useNow } from "../../ui/time";
import { DagGraph, type NodeState } from "./dag-graph";
import { DagRunWaiting } from "./dag-run-waiting";
import { tasksFromDot } from "./dot-graph";
import { Gantt } from "./gantt";
import { layoutDag } from "./layout";
import { countStates } from "./task-cells";
import { useDagRun } from "./use-dag-run";
import "./dags.css";

/** Keyed by id: another DAG run's page starts afresh (its own live state), also when only the address's id changes. */
export function DagRunView({ id }: { id: string }) {
  return <DagRunViewPage key={id} id={id} />;
}

function DagRunViewPage({ id }: { id: string }) {
  const live = useDagRun(id);
  const run = live.run;
  const running = live.status === "RUNNING";
  const now = useNow(running ? 1000 : 60_000);
  const [ask, setAsk] = useState<"cancel" | "retry" | null>(null);
  const [cancelRes, cancel] = useMutation(CancelDagRunDocument);
  const [retryRes, retry] = useMutation(RetryDagRunDocument);

  const tasks = useMemo(() => (run ? tasksFromDot(run.graph) : []), [run?.graph]);
  const mapped = useMemo(() => new Set([...tasks.filter((t) => t.mapOver).map((t) => t.key), ...live.mapped]), [tasks, live.mapped]);
  const order = useMemo(() => layoutDag(tasks).order, [tasks]);
  const states = useMemo(() => {
    void live.version;
    return (key: string): NodeState => {
      const c = live.book.task(id, key);
      const s: NodeState = { status: (c?.status ?? null) as DagTaskState | null };
      if (mapped.has(key)) s.instances = countStates(live.book.instances(id, key).values());
      return s;
    };
  }, [live.book, live.version, id, mapped]);

  if (!run) return <Page title="DAG run">{live.error ? <ErrorLine error={live.error} /> : <Loading />}</Page>;

  const status = live.status ?? run.status;
  const ended = status !== "RUNNING";
  const doCancel = async () => {
    setAsk(null);
    const r = await cancel({ id });
    if (!r.error) live.reload();
  };
  const doRetry = async () => {
    setAsk(null);
    const r = await retry({ id });
    if (!r.error) live.reload(true);
  };
  const actions = (
    <>
      <Link className="button" href={`/runs?dagRun=${encodeURIComponent(id)}`}>Task runs</Link>
      {!ended && (
        <button type="button" className="danger" onClick={() => setAsk("cancel")} disabled={cancelRes.fetching || run.cancelRequested}>Cancel DAG run</button>
      )}
      {(status === "FAILED" || status === "CANCELLED") && (
        <button type="button" onClick={() => setAsk("retry")} disabled={retryRes.fetching}>Retry from failed</button>
      )}
    </>
  );

  return (
    <Page title={`DAG run of ${run.dagName}`} actions={actions}>
      <ErrorLine error={cancelRes.error ? errorText(cancelRes.error) : retryRes.error ? errorText(retryRes.error) : null} />
      <ErrorLine error={live.error} />
      <section className="card" aria-label="About this DAG run">
        <dl className="facts">
          <dt>Status</dt>
          <dd data-dag-run-status={status}>
            <StatusBadge status={status} />
            {run.held && " held behind a running DAG run (overlap)"}
            {run.cancelRequested && status === "RUNNING" && " cancelling…"}
          </dd>
          <dt>DAG</dt>
          <dd><Link href={`/dags/${run.dagId}`}>{run.dagName}</Link> (version {run.dagVersion})</dd>
          <dt>Trigger</dt>
          <dd>{run.trigger.toLowerCase()}</dd>
          <dt>Created</dt>
          <dd><Time iso={run.createdAt} /></dd>
          <dt>Ended</dt>
          <dd>{run.finishedAt ? <><Time iso={run.finishedAt} /> (took {duration(Date.parse(run.finishedAt) - Date.parse(run.createdAt))})</> : "—"}</dd>
          <dt>Id</dt>
          <dd className="mono">{run.id}</dd>
        </dl>
        <details className="dag-params">
          <summary>Params</summary>
          <pre className="log">{JSON.stringify(run.params, null, 2)}</pre>
        </details>
      </section>

      <DagRunWaiting id={id} running={!ended} version={live.version} />

      <h2>Graph</h2>
      <DagGraph tasks={tasks} states={states} label={`Graph of this DAG run of ${run.dagName}`} />

      <h2>Timeline</h2>
      {live.rowsRead ? (
        <Gantt runId={id} order={order} book={live.book} mapped={mapped} createdAt={run.createdAt} finishedAt={run.finishedAt} now={now} />
      ) : (
        <Loading what="Reading its tasks" />
      )}

      <Confirm
        open={ask !== null}
        title={ask === "retry" ? "Retry this DAG run from failed?" : "Cancel this DAG run?"}
        confirmLabel={ask === "retry" ? "Retry from failed" : "Cancel DAG run"}
        danger={ask !== "retry"}
        onConfirm={() => void (ask === "retry" ? doRetry() : doCancel())}
        onCancel={() => setAsk(null)}
      >
        {ask === "retry" ? (
          <p>Its failed, upstream-failed, cancelled and skipped tasks run again as new attempts; succeeded tasks keep their runs and results.</p>
        ) : (
          <p>Its running task runs are killed and the tasks not started yet become cancelled. You can retry it from failed afterwards.</p>
        )}
      </Confirm>
    </Page>
  );
}
