/**
 * /runs: every run the user may see, across jobs and DAGs, newest first; filtered from the
 * address's query string, live, virtualized, with bulk retry and cancel.
 */
import { useCallback, useMemo } from "react";
import { useClient } from "urql";
import { useLocation, useSearch } from "wouter";
import { ConsoleRunsRecheckDocument, ConsoleRunsSearchDocument } from "../../../../generated/client/graphql";
import { ErrorLine, Page } from "../../ui/page";
import { BulkActions } from "./bulk-actions";
import { LiveNote } from "./live-note";
import { filtersFromSearch, filtersToSearch, matchesFilters, runsPageVariables, type RunFilters } from "./filters";
import { IgnoredFilters } from "./ignored-filters";
import { RunFiltersBar } from "./run-filters";
import { RunTable } from "./run-table";
import { useRunList, type RunPage } from "./use-run-list";
import { useSelection } from "./use-selection";
import "./runs.css";

export function RunsView() {
  const client = useClient();
  const search = useSearch();
  const [, navigate] = useLocation();
  const filters = useMemo(() => filtersFromSearch(search), [search]);
  const key = filtersToSearch(filters);

  const fetchPage = useCallback(
    async (after: string | null, recheck = false): Promise<RunPage> => {
      const r = await client.query(recheck ? ConsoleRunsRecheckDocument : ConsoleRunsSearchDocument, runsPageVariables(filters, after), { requestPolicy: "network-only" }).toPromise();
      if (r.error || !r.data) throw r.error ?? new Error("no answer");
      return { rows: r.data.runs.edges.map((e) => e.node), endCursor: r.data.runs.pageInfo.endCursor ?? null, hasNext: r.data.runs.pageInfo.hasNextPage };
    },
    [client, key],
  );
  const matches = useCallback((run: Parameters<typeof matchesFilters>[1]) => matchesFilters(filters, run), [filters]);
  const list = useRunList({ key, fetchPage, matches });
  const selection = useSelection(list.rows);

  const setFilters = (f: RunFilters) => {
    selection.clear();
    navigate(`/runs${filtersToSearch(f)}`, { replace: true });
  };

  return (
    <Page title="Runs" actions={<LiveNote error={list.liveError} />}>
      <RunFiltersBar filters={filters} onChange={setFilters} />
      <IgnoredFilters search={search} />
      <ErrorLine error={list.error} />
      <BulkActions ids={selection.ids} onResults={list.merge} onClear={selection.clear} />
      <RunTable
        label="Runs, newest first"
        rows={list.rows}
        selected={selection.selected}
        onSelect={selection.onSelect}
        onSelectAll={selection.onSelectAll}
        hasNext={list.hasNext}
        loading={list.loading}
        onEndReached={list.loadMore}
        empty={key ? "No run matches these filters." : "No runs yet. Create a job and its runs appear here as they happen."}
      />
    </Page>
  );
}
