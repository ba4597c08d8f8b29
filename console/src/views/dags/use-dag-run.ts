/**
 * One DAG run, live: its facts and graph, and every task row with its run (the timeline), read in
 * pages and kept current by dagRunUpdated(dagRunId). That stream starts with the DAG run's status
 * as it is and ends after its end; each of those (task: null) reads the rows again, exact, and so
 * does an event of an instance the rows do not have yet (a mapped task just expanded).
 */
import { useEffect, useMemo, useReducer, useRef, useState } from "react";
import { useClient, useQuery } from "urql";
import { ConsoleDagRunDocument, type ConsoleDagRunQuery } from "../../../../generated/client/graphql";
import { errorText } from "../../api/client";
import { coalesced, readDagRunRows, useDagRunEvents } from "./live";
import { CellBook } from "./task-cells";

export interface DagRunLive {
  run: ConsoleDagRunQuery["dagRun"] | null;
  /** The DAG run's status, the latest word (an event may be ahead of the facts). */
  status: string | null;
  error: string | null;
  book: CellBook;
  version: number;
  /** Keys of mapped tasks (their rows are groups). */
  mapped: ReadonlySet<string>;
  rowsRead: boolean;
  /** Read again after an action; `restarted` after a retry (a new live stream). */
  reload(restarted?: boolean): void;
}

const RESYNC_MS = 20_000;

export function useDagRun(id: string): DagRunLive {
  const client = useClient();
  const [q, again] = useQuery({ query: ConsoleDagRunDocument, variables: { id } });
  const book = useRef(new CellBook()).current;
  const [version, bump] = useReducer((n: number) => n + 1, 0);
  const [mapped, setMapped] = useState<ReadonlySet<string>>(new Set());
  const [rowsRead, setRowsRead] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // The DAG run's status as the last event said, and when: the facts read win when they are newer.
  const [said, setSaid] = useState<{ status: string; at: string } | null>(null);
  const [epoch, setEpoch] = useState(0);
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    return () => void (alive.current = false);
  }, []);

  const loadRows = useMemo(
    () =>
      coalesced(async () => {
        try {
          const r = await readDagRunRows(client, id, true);
          if (!alive.current) return;
          book.setBase(id, r.rows);
          setMapped(new Set(r.rows.filter((x) => x.mapped || x.mapIndex != null).map((x) => x.key)));
          setRowsRead(true);
          setError(null);
          bump();
        } catch (e) {
          if (alive.current) setError((e as Error).message);
        }
      }, 500),
    [client, id, book],
  );
  useEffect(() => loadRows(), [loadRows]);
  const refreshFacts = useMemo(() => coalesced(async () => again({ requestPolicy: "network-only" }), 500), [again]);
  const run = q.data?.dagRun ?? null;
  const status = said && (!run || Date.parse(said.at) >= Date.parse(run.updatedAt)) ? said.status : (run?.status ?? said?.status ?? null);

  // Safety net for events missed while the feed (re)connected: a running DAG run is read again now and then.
  useEffect(() => {
    if (status !== "RUNNING") return;
    const t = setInterval(() => {
      if (document.hidden) return;
      loadRows();
      refreshFacts();
    }, RESYNC_MS);
    return () => clearInterval(t);
  }, [status, loadRows, refreshFacts]);

  useDagRunEvents(
    { dagRunId: id },
    (e) => {
      setSaid({ status: e.status, at: e.at });
      if (e.task) {
        book.apply(id, { ...e.task, at: e.at });
        bump();
        // An instance the rows lack (a mapped task just expanded) is drawn from its events; its
        // exact times and notes come with the next read (at the end, or the periodic one).
      } else {
        loadRows();
        refreshFacts();
      }
    },
    (m) => setError(m),
    epoch,
  );

  return {
    run,
    status,
    error: q.error ? errorText(q.error) : error,
    book,
    version,
    mapped,
    rowsRead,
    reload: (restarted = false) => {
      // A retry restarts a DAG run whose stream has completed: follow it anew. Otherwise the
      // stream in place carries on (subscribing again to the same operation could race its teardown).
      if (restarted) setEpoch((n) => n + 1);
      loadRows();
      refreshFacts();
    },
  };
}
