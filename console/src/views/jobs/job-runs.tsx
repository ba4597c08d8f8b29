/**
 * A job's runs, newest first, kept live by runUpdated(jobId): a new run appears and a status
 * badge changes as the API reports it, without reloading. Each run links to its page.
 */
import { useEffect, useMemo, useRef, useState } from "react";
import { Link } from "wouter";
import { useQuery, useSubscription } from "urql";
import { ConsoleJobRunUpdatedDocument, ConsoleJobRunsDocument, type ConsoleJobRunFieldsFragment } from "../../../../generated/client/graphql";
import { ErrorLine, Loading } from "../../ui/page";
import { StatusBadge } from "../../ui/status";
import { Time, duration } from "../../ui/time";

type Run = ConsoleJobRunFieldsFragment;
const STEP = 20;
const MOST = 100;

const newer = (a: Run, b: Run | undefined) => !b || Date.parse(a.updatedAt) >= Date.parse(b.updatedAt);

/** The job's runs: the page read, with every live update laid over it (the newer version of a run wins). */
export function useJobRuns(jobId: string, first: number, onEvent: (r: Run) => void) {
  const [res, reexecute] = useQuery({ query: ConsoleJobRunsDocument, variables: { id: jobId, first }, requestPolicy: "cache-and-network" });
  const onEventRef = useRef(onEvent);
  onEventRef.current = onEvent;
  const [sub] = useSubscription({ query: ConsoleJobRunUpdatedDocument, variables: { jobId } }, (prev: Record<string, Run> = {}, data) => {
    const r = data.runUpdated;
    return newer(r, prev[r.id]) ? { ...prev, [r.id]: r } : prev;
  });
  const live = sub.data;
  const lastSeen = useRef<Record<string, Run> | undefined>(undefined);
  useEffect(() => {
    if (!live || live === lastSeen.current) return;
    const before = lastSeen.current ?? {};
    lastSeen.current = live;
    for (const r of Object.values(live)) if (before[r.id] !== r) onEventRef.current(r);
  }, [live]);

  const runs = useMemo(() => {
    const byId = new Map<string, Run>();
    for (const e of res.data?.job.runs.edges ?? []) byId.set(e.node.id, e.node);
    for (const r of Object.values(live ?? {})) if (newer(r, byId.get(r.id))) byId.set(r.id, r);
    return [...byId.values()].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || (b.id > a.id ? 1 : -1));
  }, [res.data, live]);
  return { runs, res, subError: sub.error, hasMore: !!res.data?.job.runs.pageInfo.hasNextPage, reexecute };
}

export function JobRuns({ jobId, onEvent }: { jobId: string; onEvent: (r: Run) => void }) {
  const [first, setFirst] = useState(STEP);
  const { runs, res, subError, hasMore } = useJobRuns(jobId, first, onEvent);
  return (
    <section className="card" aria-labelledby="runs-title">
      <div className="jobs-section-head">
        <h2 id="runs-title">Runs</h2>
        <span className="muted" role="status">{subError ? "" : "live"}</span>
      </div>
      <ErrorLine error={res.error} />
      <ErrorLine error={subError} />
      {res.fetching && !res.data && <Loading what="Loading runs" />}
      {res.data && runs.length === 0 && <p className="muted">No runs yet.</p>}
      {runs.length > 0 && (
        <div className="table-wrap">
          <table className="jobs-runs">
            <caption className="jobs-sr-only">Runs of this job, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Status</th>
                <th scope="col">Trigger</th>
                <th scope="col" className="hide-narrow">Attempt</th>
                <th scope="col">Scheduled for</th>
                <th scope="col" className="hide-narrow">Duration</th>
                <th scope="col" className="hide-narrow">Exit / error</th>
              </tr>
            </thead>
            <tbody>
              {runs.map((r) => (
                <tr key={r.id} data-run-id={r.id}>
                  <td><Link href={`/runs/${r.id}`} className="mono">{r.id.slice(-8)}</Link></td>
                  <td><StatusBadge status={r.cancelRequested && r.status === "RUNNING" ? "CANCELLING" : r.status} /></td>
                  <td>{r.trigger.toLowerCase()}</td>
                  <td className="hide-narrow">{r.attempt} of {r.maxAttempts}</td>
                  <td><Time iso={r.scheduledFor} /></td>
                  <td className="hide-narrow">{r.durationMs != null ? duration(r.durationMs) : r.startedAt ? "running" : "—"}</td>
                  <td className="hide-narrow jobs-clip">{r.exitCode != null ? `exit ${r.exitCode}` : ""}{r.error ? ` ${r.error}` : ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {hasMore && first < MOST && (
        <p><button type="button" onClick={() => setFirst((n) => Math.min(MOST, n + STEP))}>Show older runs</button></p>
      )}
      {hasMore && first >= MOST && <p className="muted">Older runs: see <Link href="/runs">the runs list</Link>.</p>}
    </section>
  );
}
