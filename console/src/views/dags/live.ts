/** Plumbing shared by the DAG views' hooks: the dagRunUpdated stream, paged reads, coalesced reloads. */
import { useEffect, useRef } from "react";
import { useClient, type Client } from "urql";
import {
  ConsoleDagRunStatesDocument,
  ConsoleDagRunTimelineDocument,
  DagRunUpdatedDocument,
  type DagRunUpdatedSubscription,
} from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";
import type { Row } from "./task-cells";

export type DagRunEvent = DagRunUpdatedSubscription["dagRunUpdated"];

/**
 * Follows dagRunUpdated for a DAG (dagId) or one DAG run (dagRunId) while mounted; `onEvent` is
 * read fresh on every event, so it may close over the latest render.
 */
export function useDagRunEvents(vars: { dagId?: string; dagRunId?: string } | null, onEvent: (e: DagRunEvent) => void, onError?: (message: string) => void, epoch = 0): void {
  const client = useClient();
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const errorHandler = useRef(onError);
  errorHandler.current = onError;
  // A new epoch subscribes again (a dagRunId stream completes at the DAG run's end; a retry restarts it).
  const key = vars ? `${vars.dagId ?? ""}|${vars.dagRunId ?? ""}|${epoch}` : null;
  useEffect(() => {
    if (!key || !vars) return;
    const sub = client.subscription(DagRunUpdatedDocument, vars).subscribe((r) => {
      if (r.error) errorHandler.current?.(errorText(r.error) ?? "the live feed failed");
      else if (r.data) handler.current(r.data.dagRunUpdated);
    });
    return () => sub.unsubscribe();
    // vars is described by key (a new object each render)
  }, [client, key]);
}

/**
 * A function that runs `fn` now, or once more after the run in flight when called meanwhile, and
 * then not again for `gapMs`: a burst of events costs one or two reads, never one each.
 */
export function coalesced(fn: () => Promise<void>, gapMs = 400): () => void {
  let running = false;
  let again = false;
  const go = async (): Promise<void> => {
    running = true;
    try {
      await fn();
    } finally {
      await new Promise((r) => setTimeout(r, gapMs));
      running = false;
      if (again) {
        again = false;
        void go();
      }
    }
  };
  return () => {
    if (running) again = true;
    else void go();
  };
}

/** Reads every row of a DAG run, page after page: states only, or with runs (the timeline). */
export async function readDagRunRows(client: Client, id: string, withRuns: boolean): Promise<{ status: string; rows: Row[] }> {
  const rows: Row[] = [];
  const first = withRuns ? 600 : 1000;
  let status = "RUNNING";
  let after: string | null = null;
  for (;;) {
    const vars = { id, first, after };
    const r = withRuns
      ? await client.query(ConsoleDagRunTimelineDocument, vars, { requestPolicy: "network-only" }).toPromise()
      : await client.query(ConsoleDagRunStatesDocument, vars, { requestPolicy: "network-only" }).toPromise();
    if (r.error || !r.data) throw new Error(errorText(r.error ?? null) ?? "no answer");
    const page: { edges: Array<{ node: Row }>; pageInfo: { hasNextPage: boolean; endCursor?: string | null } } = r.data.dagRun.tasks;
    status = r.data.dagRun.status;
    rows.push(...page.edges.map((e) => e.node));
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor ?? null;
  }
  return { status, rows };
}
