/**
 * /dead-letters: runs whose every attempt failed (DEAD), newest first, live (a run that dies
 * appears, a retried one changes status in place), with bulk retry. The runs list's components.
 */
import { useCallback } from "react";
import { useClient } from "urql";
import { Link } from "wouter";
import { ConsoleDeadLettersDocument } from "../../../../generated/client/graphql";
import { ErrorLine, Page } from "../../ui/page";
import { BulkActions } from "../runs/bulk-actions";
import { LiveNote } from "../runs/live-note";
import { RunTable } from "../runs/run-table";
import { useRunList, type RunPage, type RunRow } from "../runs/use-run-list";
import { useSelection } from "../runs/use-selection";
import "../runs/runs.css";

export function DeadLettersView() {
  const client = useClient();
  const fetchPage = useCallback(
    async (after: string | null): Promise<RunPage> => {
      const r = await client.query(ConsoleDeadLettersDocument, { first: 100, after }, { requestPolicy: "network-only" }).toPromise();
      if (r.error || !r.data) throw r.error ?? new Error("no answer");
      const c = r.data.deadLetters;
      return { rows: c.edges.map((e) => e.node), endCursor: c.pageInfo.endCursor ?? null, hasNext: c.pageInfo.hasNextPage };
    },
    [client],
  );
  const matches = useCallback((run: RunRow) => run.status === "DEAD", []);
  const list = useRunList({ key: "dead", fetchPage, matches });
  const selection = useSelection(list.rows);

  return (
    <Page title="Dead letters" actions={<LiveNote error={list.liveError} />}>
      <p className="muted">
        Runs whose every attempt failed. Retry gives one more attempt; a retried run stays here with its new status until you reload.{" "}
        <Link href="/runs?status=DEAD">Search them with filters</Link>.
      </p>
      <ErrorLine error={list.error} />
      <BulkActions ids={selection.ids} onResults={list.merge} onClear={selection.clear} allowCancel={false} />
      <RunTable
        label="Dead letters, newest first"
        rows={list.rows}
        selected={selection.selected}
        onSelect={selection.onSelect}
        onSelectAll={selection.onSelectAll}
        hasNext={list.hasNext}
        loading={list.loading}
        onEndReached={list.loadMore}
        empty="No dead letters: no run has used up all its attempts."
      />
    </Page>
  );
}
