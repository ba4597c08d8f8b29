/**
 * A run's log: follows live (auto-scrolling while "Follow" is on; scrolling up turns it off), one
 * attempt at a time, ANSI colours as classes on text spans (the output is never HTML), at most
 * MAX_LINES lines in the page, and a download of the whole attempt's log.
 */
import { memo, useEffect, useLayoutEffect, useRef, useState } from "react";
import type { ConsoleRunDetailFragment } from "../../../../generated/client/graphql";
import { MAX_LINES, type LogLine } from "./log-buffer";
import { LogDownload } from "./log-download";
import { useRunLog } from "./use-run-log";

/** A long log opens at its last bytes; the rest is in the download. */
const TAIL_BYTES = 512 * 1024;

const Line = memo(function Line({ line }: { line: LogLine }) {
  return (
    <span className="log-line">
      {line.spans.map((s, i) => (s.cls ? <span key={i} className={s.cls}>{s.text}</span> : s.text))}
      {"\n"}
    </span>
  );
});

const kib = (n: number) => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`);

export function RunLog({ run }: { run: ConsoleRunDetailFragment }) {
  const [choice, setChoice] = useState<"latest" | number>("latest");
  const [follow, setFollow] = useState(true);
  const pre = useRef<HTMLPreElement>(null);
  const logs = run.logStatuses;
  const latest = logs[logs.length - 1] ?? null;
  const chosen = choice === "latest" ? latest : (logs.find((l) => l.token === choice) ?? null);

  // Where to start, fixed when the choice is made (not moved by the log growing meanwhile).
  const [start, setStart] = useState<{ token: number | null; fromOffset: number }>(() => startFor(chosen));
  const startKey = choice === "latest" ? "latest" : String(choice);
  const lastKey = useRef(startKey);
  useEffect(() => {
    if (lastKey.current === startKey) return;
    lastKey.current = startKey;
    setStart(startFor(chosen));
  }, [startKey]);

  const view = useRunLog(run.id, choice === "latest" ? null : choice, start);
  const shownToken = view.token ?? chosen?.token ?? null;
  const shownStatus = logs.find((l) => l.token === shownToken) ?? chosen;
  const ended = ["SUCCEEDED", "FAILED", "TIMED_OUT", "CANCELLED", "WITHDRAWN", "DEAD"].includes(run.status);

  // Follow: keep the newest line in view.
  useLayoutEffect(() => {
    const el = pre.current;
    if (follow && el) el.scrollTop = el.scrollHeight;
  }, [view.lines, follow]);

  const onScroll = () => {
    const el = pre.current;
    if (!el) return;
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
    if (!atBottom && follow) setFollow(false);
  };

  const earlier = view.startOffset > 0 || view.dropped > 0;
  return (
    <section className="card run-log-card" aria-labelledby="log-title">
      <h2 id="log-title">Log</h2>
      <div className="log-bar">
        <label htmlFor="log-attempt">
          Attempt
          <select id="log-attempt" value={String(choice)} onChange={(e) => setChoice(e.target.value === "latest" ? "latest" : Number(e.target.value))}>
            <option value="latest">Latest{latest ? ` (attempt ${latest.attempt})` : ""}</option>
            {logs.map((l) => (
              <option key={l.token} value={l.token}>
                Attempt {l.attempt} · {kib(l.bytes)} · {l.state.toLowerCase()}
              </option>
            ))}
          </select>
        </label>
        <label className="inline" htmlFor="log-follow">
          <input id="log-follow" type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} />
          Follow
        </label>
        <LogDownload runId={run.id} status={shownStatus ?? null} />
        <span className="log-state muted" role="status" aria-live="polite">
          {shownStatus ? `${kib(Math.max(shownStatus.bytes, view.startOffset + view.bytes))}${shownStatus.truncated ? ", cut at the size limit" : ""}` : ""}
          {!ended ? (run.status === "RUNNING" ? " · following live" : " · waiting for the run to start") : shownStatus?.ended === false ? " · finishing" : " · complete"}
        </span>
      </div>
      {view.error && <p className="error" role="alert">The log feed failed: {view.error.graphQLErrors[0]?.message ?? view.error.message}. {view.error.graphQLErrors.length === 0 ? "Reconnecting…" : ""}</p>}
      {shownStatus?.state === "EXPIRED" && <p className="notice">This log was deleted by the log retention{shownStatus.reason ? `: ${shownStatus.reason}` : ""}.</p>}
      <pre className="log run-log" ref={pre} onScroll={onScroll} tabIndex={0} aria-label={`Log of attempt ${view.attempt ?? shownStatus?.attempt ?? ""}`.trim()} data-testid="run-log">
        {earlier && (
          <span className="log-note">
            {view.dropped > 0 ? `${view.dropped.toLocaleString()} earlier lines are not shown (at most ${MAX_LINES.toLocaleString()} are). ` : `Showing the last ${kib(TAIL_BYTES)}. `}
            Earlier output: download the log.
          </span>
        )}
        {view.lines.map((l) => <Line key={l.n} line={l} />)}
        {view.lines.length === 0 && <span className="muted-log">{ended ? "This attempt printed nothing." : "No output yet."}</span>}
      </pre>
    </section>
  );
}

function startFor(status: { token: number; bytes: number } | null): { token: number | null; fromOffset: number } {
  if (!status) return { token: null, fromOffset: 0 };
  return { token: status.token, fromOffset: status.bytes > TAIL_BYTES ? status.bytes - TAIL_BYTES : 0 };
}
