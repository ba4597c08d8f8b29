/**
 * On a run's page while it has not started: why, as the server says (Run.waiting). Re-read on each
 * status change and every 5 s while the tab is visible: some causes change without a run event
 * (a slot of the owner's concurrency limit frees up, an executor of the pool comes online).
 */
import { useEffect } from "react";
import { useQuery } from "urql";
import { ConsoleRunWaitingDocument } from "../../../../generated/client/graphql";
import { usePoll } from "../../ui/poll";
import { WaitReasons } from "../../ui/wait-reasons";

const NOT_STARTED = new Set(["PENDING", "SCHEDULED", "QUEUED", "RETRY_SCHEDULED"]);

export function RunWaiting({ id, status, updatedAt }: { id: string; status: string; updatedAt: string }) {
  const waiting = NOT_STARTED.has(status);
  const [q, reexecute] = useQuery({ query: ConsoleRunWaitingDocument, variables: { id }, requestPolicy: "network-only", pause: !waiting });
  useEffect(() => {
    if (waiting) reexecute({ requestPolicy: "network-only" });
  }, [waiting, status, updatedAt, reexecute]);
  usePoll(() => reexecute({ requestPolicy: "network-only" }), 5_000, waiting);
  const reasons = q.data?.run.waiting ?? [];
  if (!waiting || q.data?.run.id !== id) return null;
  return <WaitReasons reasons={reasons} title="Why it has not started" id="run-waiting-title" />;
}
