/**
 * /runs/:id: one run, live: its status (runUpdated), facts, attempts, HTTP response and log
 * (runLogs); retry and cancel, each disabled with the reason when it does not apply.
 */
import { useState } from "react";
import { useClient } from "urql";
import { Link } from "wouter";
import { ConsoleCancelRunDocument, ConsoleRetryRunDocument } from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";
import { Confirm } from "../../ui/confirm";
import { ErrorLine, Loading, Page } from "../../ui/page";
import { StatusBadge } from "../../ui/status";
import { HttpResponseCard, RunAttempts, RunFacts } from "./run-facts";
import { RunLog } from "./run-log";
import { displayStatus } from "./run-table";
import { LiveNote } from "./live-note";
import { RunWaiting } from "./run-waiting";
import { useLiveRun, type RunDetail } from "./use-live-run";
import "./runs.css";

const RETRYABLE = new Set(["FAILED", "TIMED_OUT", "CANCELLED", "DEAD"]);
const CANCELLABLE = new Set(["PENDING", "SCHEDULED", "QUEUED", "RETRY_SCHEDULED", "RUNNING"]);

export function whyNotRetry(run: RunDetail): string | null {
  if (RETRYABLE.has(run.status)) return null;
  if (run.status === "SUCCEEDED") return "It succeeded: trigger its job to run it again.";
  return "Only a failed, timed-out, cancelled or dead run can be retried; this one has not ended.";
}

export function whyNotCancel(run: RunDetail): string | null {
  if (run.cancelRequested) return "Cancelling: its node is stopping it.";
  if (CANCELLABLE.has(run.status)) return null;
  return "It has ended.";
}

export function RunView({ id }: { id: string }) {
  const client = useClient();
  const { run, job, fetching, error, liveError, update } = useLiveRun(id);
  const [confirmCancel, setConfirmCancel] = useState(false);
  const [busy, setBusy] = useState<"retry" | "cancel" | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);

  if (!run) {
    if (fetching) return <Page title="Run"><Loading what="Loading the run" /></Page>;
    const notFound = error?.graphQLErrors.some((e) => e.extensions?.code === "NOT_FOUND");
    return (
      <Page title={notFound ? "Run not found" : "Run"}>
        <ErrorLine error={error ?? "No such run."} />
        {notFound && <p>There is no run <span className="mono">{id}</span> that you can see. <Link href="/runs">Back to the runs</Link>.</p>}
      </Page>
    );
  }

  async function act(kind: "retry" | "cancel") {
    setBusy(kind);
    setActionError(null);
    setNote(null);
    const r = kind === "retry" ? await client.mutation(ConsoleRetryRunDocument, { id }).toPromise() : await client.mutation(ConsoleCancelRunDocument, { id }).toPromise();
    setBusy(null);
    if (r.error) return setActionError(errorText(r.error));
    const next = r.data && ("retryRun" in r.data ? r.data.retryRun : r.data.cancelRun);
    if (next) update(next);
    setNote(kind === "retry" ? "Retry requested: the run gets one more attempt." : next?.cancelRequested ? "Cancel requested: its node is stopping it." : "Cancelled.");
  }

  const noRetry = whyNotRetry(run);
  const noCancel = whyNotCancel(run);
  return (
    <Page
      title={`Run of ${run.jobName}`}
      actions={
        <>
          <LiveNote error={liveError} />
          <StatusBadge status={displayStatus(run)} />
          <ActionButton label="Retry" busy={busy === "retry"} why={noRetry} id="why-retry" onClick={() => void act("retry")} />
          <ActionButton label="Cancel run" busy={busy === "cancel"} why={noCancel} id="why-cancel" onClick={() => setConfirmCancel(true)} />
        </>
      }
    >
      <ErrorLine error={actionError} />
      {note && <p className="notice" role="status">{note}</p>}
      <RunWaiting id={run.id} status={displayStatus(run)} updatedAt={run.updatedAt} />
      <div className="run-grid">
        <RunFacts run={run} job={job ? { id: job.id, name: job.name } : null} />
        <RunAttempts run={run} />
        {run.httpResponse && <HttpResponseCard response={run.httpResponse} />}
      </div>
      <RunLog run={run} />
      <Confirm
        open={confirmCancel}
        title="Cancel this run?"
        confirmLabel="Cancel run"
        cancelLabel="Keep it"
        danger
        onCancel={() => setConfirmCancel(false)}
        onConfirm={() => {
          setConfirmCancel(false);
          void act("cancel");
        }}
      >
        <p>{run.status === "RUNNING" ? "Its node kills the program; the run ends cancelled." : "It will not run."}</p>
      </Confirm>
    </Page>
  );
}

function ActionButton(props: { label: string; busy: boolean; why: string | null; id: string; onClick(): void }) {
  return (
    <span className="action-with-reason">
      <button type="button" onClick={props.onClick} disabled={!!props.why || props.busy} aria-describedby={props.why ? props.id : undefined}>
        {props.busy ? `${props.label}…` : props.label}
      </button>
      {props.why && <span id={props.id} className="why-not">{props.why}</span>}
    </span>
  );
}
