/**
 * A job's actions: pause or resume, trigger, edit, delete. Trigger is idempotent per intent: each
 * click gets a fresh idempotency key (a retry after a network failure reuses it, so the API returns
 * the first run), and the second click of a double click is not a second intent.
 */
import { useRef, useState, type MouseEvent } from "react";
import { Link, useLocation } from "wouter";
import { useMutation } from "urql";
import {
  ConsoleDeleteJobDocument,
  ConsolePauseJobDocument,
  ConsoleResumeJobDocument,
  ConsoleTriggerJobDocument,
} from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";
import { Confirm } from "../../ui/confirm";
import { idempotencyKey } from "./idempotency";

export interface ActionJob {
  id: string;
  name: string;
  paused: boolean;
  status: string;
  ownerDeleted: boolean;
}

export function JobActions({ job, onChanged }: { job: ActionJob; onChanged(): void }) {
  const [, navigate] = useLocation();
  const [pauseState, pause] = useMutation(ConsolePauseJobDocument);
  const [resumeState, resume] = useMutation(ConsoleResumeJobDocument);
  const [, trigger] = useMutation(ConsoleTriggerJobDocument);
  const [deleteState, del] = useMutation(ConsoleDeleteJobDocument);
  const [confirming, setConfirming] = useState(false);
  const [triggering, setTriggering] = useState(false);
  const [said, setSaid] = useState<{ text: string; runId?: string; error?: boolean } | null>(null);
  const inFlight = useRef(false);

  async function onTrigger(e: MouseEvent<HTMLButtonElement>) {
    // e.detail counts consecutive clicks (0 from the keyboard): a double click is one intent.
    if (e.detail > 1 || inFlight.current) return;
    inFlight.current = true;
    setTriggering(true);
    const key = idempotencyKey();
    try {
      let r = await trigger({ id: job.id, idempotencyKey: key });
      // A request that may not have arrived is sent again with the same key: at most one run.
      if (r.error?.networkError) r = await trigger({ id: job.id, idempotencyKey: key });
      if (r.error || !r.data) setSaid({ text: errorText(r.error ?? null) ?? "The trigger failed.", error: true });
      else setSaid({ text: `Triggered run ${r.data.triggerJob.id.slice(-8)}.`, runId: r.data.triggerJob.id });
      onChanged();
    } finally {
      inFlight.current = false;
      setTriggering(false);
    }
  }

  async function onPauseResume() {
    const r = job.paused ? await resume({ id: job.id }) : await pause({ id: job.id });
    if (r.error) setSaid({ text: errorText(r.error) ?? "Failed.", error: true });
    else setSaid({ text: job.paused ? "Resumed." : "Paused: no slot fires until you resume it." });
    onChanged();
  }

  async function onDelete() {
    const r = await del({ id: job.id });
    if (r.error) {
      setConfirming(false);
      setSaid({ text: errorText(r.error) ?? "The delete failed.", error: true });
      return;
    }
    setConfirming(false);
    navigate("/jobs");
  }

  const frozen = job.ownerDeleted;
  return (
    <>
      <div className="actions" role="group" aria-label="Job actions">
        <button type="button" onClick={onPauseResume} disabled={frozen || pauseState.fetching || resumeState.fetching || job.status === "COMPLETED"}>
          {job.paused ? "Resume" : "Pause"}
        </button>
        <button type="button" className="primary" onClick={onTrigger} disabled={frozen || triggering} aria-busy={triggering}>
          {triggering ? "Triggering…" : "Trigger now"}
        </button>
        <Link href={`/jobs/${job.id}/edit`} className="button">Edit</Link>
        <button type="button" className="danger" onClick={() => setConfirming(true)}>Delete…</button>
      </div>
      <p className={said?.error ? "error jobs-said" : "jobs-said"} role={said?.error ? "alert" : "status"}>
        {said?.text}
        {said?.runId && <> <Link href={`/runs/${said.runId}`}>Open it</Link></>}
      </p>
      <Confirm
        open={confirming}
        title={`Delete the job “${job.name}”?`}
        confirmLabel={deleteState.fetching ? "Deleting…" : "Delete job"}
        danger
        onConfirm={onDelete}
        onCancel={() => setConfirming(false)}
      >
        <p>
          The job <strong>{job.name}</strong> and its schedule are deleted. Its waiting runs are cancelled; a running one
          finishes. This cannot be undone.
        </p>
      </Confirm>
    </>
  );
}
