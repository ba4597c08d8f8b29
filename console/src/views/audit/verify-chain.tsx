/**
 * "Verify chain" (administrators): asks the API to check the audit trail's hash chain
 * (`verifyAuditLog`, docs/audit.md) and says the result plainly: the chain holds (how many entries,
 * up to which, and the last hash to keep elsewhere), or where it first breaks and how.
 */
import { useState } from "react";
import { useClient } from "urql";
import { ConsoleVerifyAuditLogDocument, type ConsoleVerifyAuditLogQuery } from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";

type Verification = ConsoleVerifyAuditLogQuery["verifyAuditLog"];

const PROBLEM: Record<string, string> = {
  ALTERED: "altered: the entry no longer hashes to its stored hash",
  REMOVED: "entries removed",
  INSERTED: "an entry inserted or put in place of another",
};

export type VerifyState = { state: "idle" } | { state: "running" } | { state: "done"; result: Verification; at: number } | { state: "failed"; message: string };

export function useVerifyChain(): { verify: VerifyState; run(): void; dismiss(): void } {
  const client = useClient();
  const [verify, setVerify] = useState<VerifyState>({ state: "idle" });
  const run = () => {
    setVerify({ state: "running" });
    void client
      .query(ConsoleVerifyAuditLogDocument, {}, { requestPolicy: "network-only" })
      .toPromise()
      .then((r) => {
        if (r.data) setVerify({ state: "done", result: r.data.verifyAuditLog, at: Date.now() });
        else setVerify({ state: "failed", message: errorText(r.error) ?? "The API gave no answer." });
      });
  };
  return { verify, run, dismiss: () => setVerify({ state: "idle" }) };
}

export function VerifyButton({ verify, run }: { verify: VerifyState; run(): void }) {
  const running = verify.state === "running";
  return (
    <button type="button" onClick={run} disabled={running} aria-describedby="audit-verify-result">
      {running ? "Verifying…" : "Verify chain"}
    </button>
  );
}

/** The result, in a live region: a screen reader hears it when it arrives. */
export function VerifyResult({ verify, onClose }: { verify: VerifyState; onClose(): void }) {
  return (
    <div id="audit-verify-result" role="status" aria-live="polite" className="audit-verify-slot">
      {verify.state === "running" && <p className="muted">Checking every entry of the chain…</p>}
      {verify.state === "failed" && <p className="error">Could not verify the chain: {verify.message}</p>}
      {verify.state === "done" && <Outcome v={verify.result} onClose={onClose} />}
    </div>
  );
}

function Outcome({ v, onClose }: { v: Verification; onClose(): void }) {
  const range = v.checked > 0 ? `entries ${v.anchorSeq + 1} to ${v.lastSeq}` : "no entries";
  return (
    <div className={`card audit-verify ${v.ok ? "ok" : "broken"}`} data-verify={v.ok ? "ok" : "broken"}>
      {v.ok ? (
        <p>
          <span className="badge tone-ok">chain holds</span> {v.checked.toLocaleString()} {v.checked === 1 ? "entry" : "entries"} checked ({range}
          {v.anchorSeq > 0 ? `; the ${v.anchorSeq.toLocaleString()} before were removed by retention` : ""}).
        </p>
      ) : (
        <p>
          <span className="badge tone-bad">chain broken</span>{" "}
          {v.broken?.seq != null ? <>First broken entry: <strong>#{v.broken.seq}</strong></> : "The chain is broken"}
          {v.broken ? <> — {PROBLEM[v.broken.problem] ?? v.broken.problem.toLowerCase()}. {v.broken.detail}</> : "."} ({v.checked.toLocaleString()} entries checked before it.)
        </p>
      )}
      <p className="muted audit-hash">
        Last hash (#{v.lastSeq}): <code>{v.lastHash}</code>. Kept somewhere the database's writers cannot reach, it shows later whether the chain up to here was rewritten.
      </p>
      <button type="button" onClick={onClose}>Dismiss</button>
    </div>
  );
}
