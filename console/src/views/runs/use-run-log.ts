/**
 * Following one run's log with the `runLogs` subscription: from an offset of one attempt's log
 * (its tail when it is long), then live. A cursor (token, next byte) drops what a reconnect sends
 * again; when the feed fails it is resubscribed from the cursor, so nothing is missed or repeated.
 * Chunks are applied once per animation frame.
 */
import { useEffect, useRef, useState } from "react";
import { useClient } from "urql";
import type { CombinedError } from "@urql/core";
import { ConsoleRunLogFollowDocument } from "../../../../generated/client/graphql";
import { LogBuffer, type LogLine, type LogStreamName } from "./log-buffer";

export interface LogView {
  lines: LogLine[];
  /** Lines dropped from the top of what is shown. */
  dropped: number;
  /** The byte the shown log starts at (> 0: earlier output is only in the download). */
  startOffset: number;
  /** The attempt (claim token) being shown; null before its first chunk. */
  token: number | null;
  attempt: number | null;
  /** Bytes received. */
  bytes: number;
  error: CombinedError | null;
}

interface Chunk {
  token: number;
  attempt: number;
  offset: number;
  size: number;
  stream: LogStreamName;
  data: string;
}

/**
 * @param token the attempt's claim token to show, or null for the latest (switching to each new attempt)
 * @param fromOffset where to start in that log (its first chunk's token when `token` is null)
 */
export function useRunLog(runId: string, token: number | null, start: { token: number | null; fromOffset: number }): LogView {
  const client = useClient();
  const empty: LogView = { lines: [], dropped: 0, startOffset: start.fromOffset, token: start.token, attempt: null, bytes: 0, error: null };
  const [view, setView] = useState<LogView>(empty);
  const [resume, setResume] = useState<{ token: number | null; fromOffset: number; n: number } | null>(null);
  const buffer = useRef(new LogBuffer());
  const cursor = useRef<{ token: number | null; next: number; attempt: number | null; startOffset: number; bytes: number }>({ token: null, next: 0, attempt: null, startOffset: 0, bytes: 0 });
  const queue = useRef<Chunk[]>([]);
  const frame = useRef(0);
  const errorRef = useRef<CombinedError | null>(null);

  // A new run or attempt choice: start over.
  const startKey = `${runId}:${token ?? "latest"}:${start.token ?? ""}:${start.fromOffset}`;
  useEffect(() => {
    buffer.current = new LogBuffer();
    cursor.current = { token: start.token, next: start.fromOffset, attempt: null, startOffset: start.fromOffset, bytes: 0 };
    queue.current = [];
    errorRef.current = null;
    setResume(null);
    setView({ ...empty, startOffset: start.fromOffset });
  }, [startKey]);

  useEffect(() => {
    const flush = () => {
      frame.current = 0;
      const c = cursor.current;
      for (const ch of queue.current.splice(0)) {
        if (c.token !== null && ch.token !== c.token) {
          // Another attempt's log: follow it when showing the latest, else it is not ours.
          if (token !== null || ch.token < c.token) continue;
          buffer.current = new LogBuffer();
          c.token = ch.token;
          c.next = 0;
          c.startOffset = 0;
          c.bytes = 0;
        }
        if (c.token === null) c.token = ch.token;
        if (ch.offset < c.next) continue; // sent again after a reconnect
        buffer.current.append(ch.data, ch.stream);
        c.next = ch.offset + ch.size;
        c.bytes += ch.size;
        c.attempt = ch.attempt;
      }
      setView({ lines: buffer.current.snapshot(), dropped: buffer.current.dropped, startOffset: c.startOffset, token: c.token, attempt: c.attempt, bytes: c.bytes, error: errorRef.current });
    };
    const from = resume ?? { token: start.token, fromOffset: start.fromOffset };
    let retry: ReturnType<typeof setTimeout> | null = null;
    const sub = client
      .subscription(ConsoleRunLogFollowDocument, { runId, token: from.token, fromOffset: from.fromOffset })
      .subscribe((r) => {
        if (r.error) {
          errorRef.current = r.error;
          if (!frame.current) frame.current = requestAnimationFrame(flush);
          // Not found or refused: stop. Anything else (a dropped connection): resume from the cursor.
          const code = r.error.graphQLErrors[0]?.extensions?.code;
          if (code === "NOT_FOUND" || code === "FORBIDDEN" || code === "BAD_USER_INPUT" || retry) return;
          retry = setTimeout(() => {
            const c = cursor.current;
            setResume((p) => ({ token: c.token, fromOffset: c.token === null ? 0 : c.next, n: (p?.n ?? 0) + 1 }));
          }, 2_000);
          return;
        }
        if (!r.data) return;
        errorRef.current = null;
        queue.current.push(r.data.runLogs as Chunk);
        if (!frame.current) frame.current = requestAnimationFrame(flush);
      });
    return () => {
      sub.unsubscribe();
      if (retry) clearTimeout(retry);
      if (frame.current) cancelAnimationFrame(frame.current);
      frame.current = 0;
    };
  }, [client, startKey, resume]);

  return view;
}
