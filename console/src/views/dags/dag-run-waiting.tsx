/**
 * On a running DAG run's page: why its tasks have not started, as the server says
 * (DagRunTask.waiting; docs/waiting.md), e.g. a task waiting on its parents, the DAG run's
 * maxParallel, or a task run held by its owner's concurrency limit. Read again when the DAG run
 * changes (`version`, at most once a second) and every 5 s while the tab is visible: some causes change without an event.
 */
import { useEffect, useRef } from "react";
import { useQuery } from "urql";
import { ConsoleDagRunWaitingDocument } from "../../../../generated/client/graphql";
import { usePoll } from "../../ui/poll";
import { WaitReasonList } from "../../ui/wait-reasons";

/** Task rows read for their reasons (the first page; a wider DAG run says there are more). */
const ROWS = 100;

export function DagRunWaiting({ id, running, version }: { id: string; running: boolean; version: number }) {
  const [q, reexecute] = useQuery({ query: ConsoleDagRunWaitingDocument, variables: { id, first: ROWS }, requestPolicy: "network-only", pause: !running });
  // A busy DAG run changes many times a second: read again at most once a second.
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    if (!running || pending.current) return;
    pending.current = setTimeout(() => {
      pending.current = null;
      reexecute({ requestPolicy: "network-only" });
    }, 1_000);
  }, [running, version, reexecute]);
  useEffect(() => () => void (pending.current && clearTimeout(pending.current)), []);
  usePoll(() => reexecute({ requestPolicy: "network-only" }), 5_000, running);
  if (!running || q.data?.dagRun.id !== id) return null;
  const waiting = q.data.dagRun.tasks.edges.map((e) => e.node).filter((t) => t.waiting.length > 0);
  if (waiting.length === 0) return null;
  return (
    <section className="notice wait-reasons" aria-labelledby="dag-run-waiting-title" data-testid="dag-run-waiting">
      <h2 id="dag-run-waiting-title">Why tasks wait</h2>
      <ul>
        {waiting.map((t) => (
          <li key={`${t.key}:${t.mapIndex ?? ""}`} data-task={t.key}>
            <span className="mono">{t.mapIndex == null ? t.key : `${t.key}[${t.mapIndex}]`}</span>
            <WaitReasonList reasons={t.waiting} />
          </li>
        ))}
      </ul>
      {q.data.dagRun.tasks.pageInfo.hasNextPage && <p className="muted">Of its first {ROWS} task rows; the others are on the timeline.</p>}
    </section>
  );
}
