/** A run's facts, its attempts (node, start, end and why each ended), its history and its HTTP response. */
import type { ReactNode } from "react";
import { Link } from "wouter";
import type { ConsoleRunDetailFragment } from "../../../../generated/client/graphql";
import { StatusBadge } from "../../ui/status";
import { duration, Time, useNow } from "../../ui/time";
import { displayStatus } from "./run-table";

type Run = ConsoleRunDetailFragment;

const ENDS = new Set(["SUCCEEDED", "FAILED", "TIMED_OUT", "CANCELLED", "WITHDRAWN", "DEAD", "RETRY_SCHEDULED"]);

/** A node as a run names it: its id, and its name while its document is there. */
type NodeRef = { id: string; name: string } | null;

export interface AttemptRow {
  attempt: number;
  nodeId: string | null;
  node: NodeRef;
  startedAt: string | null;
  endedAt: string | null;
  outcome: string | null;
  reason: string | null;
  log: Run["logStatuses"][number] | null;
}

/** One row per attempt, from the run's transitions (and its logs, one per claim). */
export function attemptsOf(run: Run): AttemptRow[] {
  const byAttempt = new Map<number, AttemptRow>();
  const get = (n: number) => {
    let a = byAttempt.get(n);
    if (!a) byAttempt.set(n, (a = { attempt: n, nodeId: null, node: null, startedAt: null, endedAt: null, outcome: null, reason: null, log: null }));
    return a;
  };
  // Claims (RUNNING) name no attempt: they belong to the current one, or the next once it ended.
  let cur = 1;
  let curEnded = false;
  for (const t of run.history) {
    if (t.attempt == null && t.status === "RUNNING" && curEnded) {
      cur += 1;
      curEnded = false;
    } else if (t.attempt != null && t.attempt !== cur) {
      cur = t.attempt;
      curEnded = false;
    } else if (curEnded) continue; // the run waiting between attempts, or cancelled while it waited
    if (cur < 1) continue;
    const a = get(cur);
    if (t.nodeId) {
      a.nodeId = t.nodeId;
      a.node = t.node ?? null;
    }
    if (t.status === "RUNNING" && !a.startedAt) a.startedAt = t.at;
    // A running attempt queued again (its node was lost) ended too.
    if (ENDS.has(t.status) || (t.status === "QUEUED" && a.startedAt)) {
      a.endedAt = t.at;
      a.outcome = t.status === "QUEUED" ? "LOST" : t.status;
      a.reason = t.reason ?? null;
      curEnded = true;
    }
  }
  for (const l of run.logStatuses) {
    const a = get(l.attempt);
    if (!a.log || l.token > a.log.token) a.log = l;
  }
  // The current attempt, if the history has not named it yet.
  if (run.startedAt && !byAttempt.has(run.attempt) && run.status === "RUNNING") {
    const a = get(run.attempt);
    a.startedAt = run.startedAt;
    a.nodeId = run.nodeId ?? null;
    a.node = run.node ?? null;
  }
  return [...byAttempt.values()].sort((x, y) => x.attempt - y.attempt);
}

/** Why an attempt ended: the transition's reason, and for the last attempt the run's error. */
function why(a: AttemptRow, run: Run): string | null {
  const parts = [a.reason];
  if (a.attempt === run.attempt && a.endedAt) parts.push(run.error ?? (run.signal ? `signal ${run.signal}` : run.exitCode != null ? `exit code ${run.exitCode}` : null));
  const seen = [...new Set(parts.filter((p): p is string => !!p))];
  return seen.length > 0 ? seen.join(": ") : null;
}

function Fact({ term, children }: { term: string; children: ReactNode }) {
  return (
    <>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </>
  );
}

const none = <span className="muted">—</span>;

/** A node by name (its id on hover), or by id once its document is gone. */
function NodeName({ id, node }: { id: string; node: NodeRef | undefined }) {
  return node ? <span title={id}>{node.name}</span> : <span className="mono">{id}</span>;
}

export function RunFacts({ run, job }: { run: Run; job: { id: string; name: string } | null }) {
  const now = useNow(1_000);
  const running = run.startedAt && !run.finishedAt;
  const ms = run.durationMs ?? (running ? now - Date.parse(run.startedAt!) : null);
  return (
    <section className="card" aria-labelledby="facts-title">
      <h2 id="facts-title">Facts</h2>
      <dl className="facts">
        <Fact term="Status"><StatusBadge status={displayStatus(run)} /></Fact>
        <Fact term="Job">{job ? <Link href={`/jobs/${encodeURIComponent(job.id)}`}>{job.name}</Link> : <span>{run.jobName} <span className="muted">(deleted, or a DAG task)</span></span>}</Fact>
        <Fact term="Run id"><span className="mono">{run.id}</span></Fact>
        <Fact term="Trigger">{run.trigger.toLowerCase()}</Fact>
        <Fact term="Attempt">{run.attempt} of {run.maxAttempts}</Fact>
        <Fact term="Pool">{run.pool}</Fact>
        <Fact term="Node">{run.nodeId ? <NodeName id={run.nodeId} node={run.node} /> : none}</Fact>
        <Fact term="Scheduled for"><Time iso={run.scheduledFor} /></Fact>
        <Fact term="Queued"><Time iso={run.queuedAt} /></Fact>
        <Fact term="Started"><Time iso={run.startedAt} /></Fact>
        <Fact term="Finished"><Time iso={run.finishedAt} /></Fact>
        <Fact term="Duration">{duration(ms == null ? null : Math.max(0, ms))}</Fact>
        {run.retryAt && <Fact term="Next attempt"><Time iso={run.retryAt} /> (<Time iso={run.retryAt} mode="relative" />)</Fact>}
        <Fact term="Exit code">{run.exitCode ?? none}</Fact>
        <Fact term="Signal">{run.signal ?? none}</Fact>
        <Fact term="Peak memory">{run.usage?.peakMemoryMb != null ? `${run.usage.peakMemoryMb.toFixed(1)} MB` : none}</Fact>
        <Fact term="CPU time">{run.usage?.cpuSeconds != null ? `${run.usage.cpuSeconds.toFixed(2)} s` : none}</Fact>
        <Fact term="Priority">{run.priority}</Fact>
        {run.error && <Fact term="Error"><pre className="run-error">{run.error}</pre></Fact>}
      </dl>
    </section>
  );
}

export function RunAttempts({ run }: { run: Run }) {
  const rows = attemptsOf(run);
  return (
    <section className="card" aria-labelledby="attempts-title">
      <h2 id="attempts-title">Attempts</h2>
      {rows.length === 0 ? (
        <p className="muted">No attempt has started yet.</p>
      ) : (
        <div className="table-wrap">
          <table className="attempts">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Node</th>
                <th scope="col">Started</th>
                <th scope="col">Ended</th>
                <th scope="col">Outcome</th>
                <th scope="col">Why</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((a) => (
                <tr key={a.attempt}>
                  <td>{a.attempt}</td>
                  <td>{a.nodeId ? <NodeName id={a.nodeId} node={a.node} /> : none}</td>
                  <td><Time iso={a.startedAt} /></td>
                  <td><Time iso={a.endedAt} /></td>
                  <td>{a.outcome ? <StatusBadge status={a.outcome} /> : a.startedAt ? <StatusBadge status="RUNNING" /> : none}</td>
                  <td>{why(a, run) ?? none}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <details className="history">
        <summary>Every status change ({run.history.length})</summary>
        <ol className="history-list">
          {run.history.map((t, i) => (
            <li key={i}>
              <Time iso={t.at} /> <StatusBadge status={t.status} />
              {t.attempt != null && <> attempt {t.attempt}</>}
              {t.nodeId && <> on <NodeName id={t.nodeId} node={t.node} /></>}
              {t.reason && <>: {t.reason}</>}
            </li>
          ))}
        </ol>
      </details>
    </section>
  );
}

export function HttpResponseCard({ response }: { response: NonNullable<Run["httpResponse"]> }) {
  const headers = Object.entries(response.headers ?? {});
  return (
    <section className="card" aria-labelledby="http-title">
      <h2 id="http-title">HTTP response</h2>
      <dl className="facts">
        <Fact term="Status">{response.status}</Fact>
        <Fact term="Took">{duration(response.durationMs)}</Fact>
      </dl>
      {headers.length > 0 && (
        <details>
          <summary>Headers ({headers.length})</summary>
          <dl className="facts">
            {headers.map(([k, v]) => <Fact key={k} term={k}><span className="mono">{String(v)}</span></Fact>)}
          </dl>
        </details>
      )}
      <h3 className="muted">Body{response.bodyTruncated ? " (first 64 KiB)" : ""}</h3>
      <pre className="log http-body">{response.body || "(empty)"}</pre>
    </section>
  );
}
