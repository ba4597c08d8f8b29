/**
 * A DAG's latest DAG runs and every task's state in each, live: the grid's columns and the graph's
 * colours on the DAG page. The list and each DAG run's states are read once, then kept current by
 * dagRunUpdated(dagId): a task event patches its cell, a DAG run not in the list (just triggered)
 * reloads the list, a DAG run's end reloads its states (exact, and the end time).
 */
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from "react";
import { useClient } from "urql";
import { ConsoleDagRunsOfDagDocument, type ConsoleDagRunsOfDagQuery } from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";
import { coalesced, readDagRunRows, useDagRunEvents, type DagRunEvent } from "./live";
import { CellBook } from "./task-cells";

export type DagRunSummary = ConsoleDagRunsOfDagQuery["dagRuns"]["edges"][number]["node"];

export interface DagRunsState {
  /** Newest first; null until read. */
  runs: DagRunSummary[] | null;
  hasMore: boolean;
  book: CellBook;
  /** Bumped whenever the book changes (a dependency for memos). */
  version: number;
  error: string | null;
  /** Read the list again now (after a trigger). */
  reload(): void;
}

/** Safety net for events missed while the feed was (re)connecting: running DAG runs are read again this often. */
const RESYNC_MS = 15_000;

export function useDagRuns(dagId: string, count: number): DagRunsState {
  const client = useClient();
  const [runs, setRuns] = useState<DagRunSummary[] | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [version, bump] = useReducer((n: number) => n + 1, 0);
  const book = useRef(new CellBook()).current;
  const runsRef = useRef<DagRunSummary[] | null>(null);
  runsRef.current = runs;
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    return () => void (alive.current = false);
  }, []);

  const loaders = useRef(new Map<string, () => void>());
  const loadStates = useCallback(
    (runId: string) => {
      let l = loaders.current.get(runId);
      if (!l) {
        l = coalesced(async () => {
          try {
            const { rows } = await readDagRunRows(client, runId, false);
            if (!alive.current) return;
            book.setBase(runId, rows);
            bump();
          } catch (e) {
            if (alive.current) setError((e as Error).message);
          }
        });
        loaders.current.set(runId, l);
      }
      l();
    },
    [client, book],
  );

  const loadList = useMemo(
    () =>
      coalesced(async () => {
        const r = await client.query(ConsoleDagRunsOfDagDocument, { dagId, first: count }, { requestPolicy: "network-only" }).toPromise();
        if (!alive.current) return;
        if (r.error || !r.data) {
          setError(errorText(r.error ?? null) ?? "no answer");
          return;
        }
        setError(null);
        const list = r.data.dagRuns.edges.map((e) => e.node);
        setRuns(list);
        setHasMore(r.data.dagRuns.pageInfo.hasNextPage);
        for (const run of list) if (!book.has(run.id)) loadStates(run.id);
      }),
    [client, dagId, count, book, loadStates],
  );

  useEffect(() => loadList(), [loadList]);

  useDagRunEvents(
    { dagId },
    (e: DagRunEvent) => {
      const known = runsRef.current?.some((r) => r.id === e.dagRunId);
      if (!known) loadList();
      if (e.task) {
        book.apply(e.dagRunId, { ...e.task, at: e.at });
        bump();
      } else if (known) {
        loadStates(e.dagRunId);
        loadList();
      }
    },
    (m) => setError(m),
  );

  useEffect(() => {
    const t = setInterval(() => {
      if (document.hidden) return;
      for (const r of runsRef.current ?? []) if (r.status === "RUNNING") loadStates(r.id);
    }, RESYNC_MS);
    return () => clearInterval(t);
  }, [loadStates]);

  return { runs, hasMore, book, version, error, reload: loadList };
}
