/**
 * Bulk retry and cancel of the selected runs: a confirmation that says how many, the ids sent in
 * calls of at most 100 (the API's limit), and a summary of what was done and why each other id
 * was not, with the API's own message.
 */
import { useState } from "react";
import { useClient } from "urql";
import { ConsoleCancelRunsDocument, ConsoleRetryRunsDocument } from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";
import { Confirm } from "../../ui/confirm";
import type { RunRow } from "./use-run-list";

const CHUNK = 100;
type Action = "retry" | "cancel";

interface Outcome {
  action: Action;
  done: number;
  failed: Array<{ id: string; message: string }>;
}

const plural = (n: number, word = "run") => `${n.toLocaleString()} ${word}${n === 1 ? "" : "s"}`;

export function BulkActions(props: { ids: string[]; onResults(runs: RunRow[]): void; onClear(): void; allowCancel?: boolean }) {
  const client = useClient();
  const [asking, setAsking] = useState<Action | null>(null);
  const [progress, setProgress] = useState<{ action: Action; sent: number; total: number } | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const n = props.ids.length;
  const allowCancel = props.allowCancel ?? true;

  async function run(action: Action, ids: string[]) {
    setOutcome(null);
    const result: Outcome = { action, done: 0, failed: [] };
    setProgress({ action, sent: 0, total: ids.length });
    for (let i = 0; i < ids.length; i += CHUNK) {
      const chunk = ids.slice(i, i + CHUNK);
      const r =
        action === "cancel"
          ? await client.mutation(ConsoleCancelRunsDocument, { ids: chunk }).toPromise()
          : await client.mutation(ConsoleRetryRunsDocument, { ids: chunk }).toPromise();
      const items = r.data ? ("cancelRuns" in r.data ? r.data.cancelRuns : r.data.retryRuns) : null;
      if (!items) {
        // The whole call failed (rate limit, network): every id of it failed with that message.
        const message = errorText(r.error ?? null) ?? "no answer";
        for (const id of chunk) result.failed.push({ id, message });
      } else {
        const runs: RunRow[] = [];
        for (const it of items) {
          if (it.error) result.failed.push({ id: it.id, message: it.error.message });
          else {
            result.done++;
            if (it.run) runs.push(it.run);
          }
        }
        props.onResults(runs);
      }
      setProgress({ action, sent: Math.min(ids.length, i + CHUNK), total: ids.length });
    }
    setProgress(null);
    setOutcome(result);
    props.onClear();
  }

  const verb = asking === "cancel" ? "Cancel" : "Retry";
  return (
    <div className="bulk" aria-label="Bulk actions" role="group">
      <span className="bulk-count" aria-live="polite">{n > 0 ? `${plural(n)} selected` : "Select runs to retry or cancel them"}</span>
      <button type="button" disabled={n === 0 || !!progress} onClick={() => setAsking("retry")}>Retry selected</button>
      {allowCancel && <button type="button" disabled={n === 0 || !!progress} onClick={() => setAsking("cancel")}>Cancel selected</button>}
      {n > 0 && <button type="button" className="linkish" onClick={props.onClear} disabled={!!progress}>Clear selection</button>}
      {progress && (
        <span role="status" className="muted">
          {progress.action === "cancel" ? "Cancelling" : "Retrying"}… {progress.sent.toLocaleString()} of {progress.total.toLocaleString()}
        </span>
      )}
      <Confirm
        open={asking !== null}
        title={`${verb} ${plural(n)}?`}
        confirmLabel={`${verb} ${plural(n)}`}
        cancelLabel="Go back"
        danger={asking === "cancel"}
        onCancel={() => setAsking(null)}
        onConfirm={() => {
          const action = asking!;
          setAsking(null);
          void run(action, props.ids);
        }}
      >
        {asking === "cancel" ? (
          <p>Waiting runs are cancelled at once; running ones are stopped by their node. Runs that have already ended are left as they are.</p>
        ) : (
          <p>Each failed, timed-out, cancelled or dead run gets one more attempt. Runs that cannot be retried are left as they are.</p>
        )}
      </Confirm>
      {outcome && <BulkOutcome outcome={outcome} onDismiss={() => setOutcome(null)} />}
    </div>
  );
}

function BulkOutcome({ outcome, onDismiss }: { outcome: Outcome; onDismiss(): void }) {
  const verbed = outcome.action === "cancel" ? "cancelled" : "retried";
  const shown = outcome.failed.slice(0, 20);
  return (
    <div className={outcome.failed.length > 0 ? "bulk-outcome has-failures" : "bulk-outcome"} role="status">
      <p>
        <strong>{outcome.done.toLocaleString()} {verbed}</strong>
        {outcome.failed.length > 0 && <>, <strong>{outcome.failed.length.toLocaleString()} failed</strong></>}.
        <button type="button" className="linkish" onClick={onDismiss}>Dismiss</button>
      </p>
      {shown.length > 0 && (
        <ul className="bulk-failures">
          {shown.map((f) => (
            <li key={f.id}>
              run <span className="mono">{f.id}</span>: {f.message}
            </li>
          ))}
          {outcome.failed.length > shown.length && <li>and {(outcome.failed.length - shown.length).toLocaleString()} more</li>}
        </ul>
      )}
    </div>
  );
}
