/**
 * The DAGs list: name, schedule in words, paused, the latest DAG run's status, the next fire; a page
 * at a time (newest DAGs first). Live: a DAG run starting or ending (dagRunUpdated of all the
 * user's DAG runs) reads the page again, at most every second or so.
 */
import { useMemo, useRef } from "react";
import { Link } from "wouter";
import { useQuery } from "urql";
import { ConsoleDagsPageDocument } from "../../../../generated/client/graphql";
import { ErrorLine, Loading, Page } from "../../ui/page";
import { useCursorStack } from "../../ui/paging";
import { StatusBadge } from "../../ui/status";
import { Time, useNow } from "../../ui/time";
import { coalesced, useDagRunEvents } from "./live";
import { Pager } from "./pager";
import { ScheduleWords } from "./schedule-words";
import "./dags.css";

const PAGE = 25;

export function DagsView() {
  const pages = useCursorStack();
  const { after } = pages;
  const [q, again] = useQuery({ query: ConsoleDagsPageDocument, variables: { first: PAGE, after }, requestPolicy: "cache-and-network" });
  useNow(30_000);
  const conn = q.data?.dags;

  const latest = useRef(new Map<string, string | undefined>());
  latest.current = new Map((conn?.edges ?? []).map((e) => [e.node.id, e.node.runs.edges[0]?.node.id]));
  const refresh = useMemo(() => coalesced(async () => again({ requestPolicy: "network-only" }), 1000), [again]);
  useDagRunEvents({}, (e) => {
    if (!latest.current.has(e.dagId)) return; // not on this page
    if (!e.task || latest.current.get(e.dagId) !== e.dagRunId) refresh();
  });

  return (
    <Page title="DAGs">
      <ErrorLine error={q.error} />
      {!conn ? (
        !q.error && <Loading />
      ) : conn.edges.length === 0 && !pages.hasPrev ? (
        <p className="muted">No DAGs yet. Create one through the API (createDag); see docs/dags.md.</p>
      ) : (
        <>
          <div className="table-wrap">
            <table className="dag-list">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Schedule</th>
                  <th scope="col">State</th>
                  <th scope="col">Last DAG run</th>
                  <th scope="col" className="hide-narrow">Next fire</th>
                </tr>
              </thead>
              <tbody>
                {conn.edges.map(({ node: d }) => {
                  const last = d.runs.edges[0]?.node;
                  return (
                    <tr key={d.id} data-dag={d.id}>
                      <td>
                        <Link href={`/dags/${d.id}`} className="dag-name">{d.name}</Link>
                        {d.description && <div className="muted dag-desc">{d.description}</div>}
                      </td>
                      <td>{d.schedule ? <ScheduleWords schedule={d.schedule} /> : <span className="muted">triggered only</span>}</td>
                      <td><StatusBadge status={d.paused ? "PAUSED" : "ACTIVE"} label={d.paused ? "paused" : "active"} /></td>
                      <td>
                        {last ? (
                          <Link href={`/dag-runs/${last.id}`} className="dag-last">
                            <StatusBadge status={last.status} /> <Time iso={last.createdAt} mode="relative" />
                          </Link>
                        ) : (
                          <span className="muted">never run</span>
                        )}
                      </td>
                      <td className="hide-narrow"><Time iso={d.nextFireAt} /></td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          <Pager
            label="DAGs pages"
            page={pages.page}
            hasPrev={pages.hasPrev}
            hasNext={conn.pageInfo.hasNextPage}
            onPrev={pages.prev}
            onNext={() => pages.next(conn.pageInfo)}
            prev="Newer"
            next="Older"
          />
        </>
      )}
    </Page>
  );
}
