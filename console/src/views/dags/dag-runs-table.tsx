/** A DAG's runs, newest first, a page at a time (by cursor), each a link to its page. */
import { Link } from "wouter";
import { useQuery } from "urql";
import { ConsoleDagRunsOfDagDocument } from "../../../../generated/client/graphql";
import { ErrorLine, Loading } from "../../ui/page";
import { useCursorStack } from "../../ui/paging";
import { StatusBadge } from "../../ui/status";
import { duration, Time } from "../../ui/time";
import { Pager } from "./pager";

const PAGE = 20;

export function DagRunsTable({ dagId }: { dagId: string }) {
  const pages = useCursorStack();
  const { after } = pages;
  const [q] = useQuery({ query: ConsoleDagRunsOfDagDocument, variables: { dagId, first: PAGE, after }, requestPolicy: "cache-and-network" });
  const conn = q.data?.dagRuns;
  if (q.error) return <ErrorLine error={q.error} />;
  if (!conn) return <Loading />;
  if (conn.edges.length === 0 && !pages.hasPrev) return <p className="muted">No DAG runs yet.</p>;
  return (
    <>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">DAG run</th>
              <th scope="col">Status</th>
              <th scope="col">Trigger</th>
              <th scope="col">Started</th>
              <th scope="col" className="hide-narrow">Took</th>
              <th scope="col" className="hide-narrow">Version</th>
            </tr>
          </thead>
          <tbody>
            {conn.edges.map(({ node: r }) => (
              <tr key={r.id}>
                <td><Link href={`/dag-runs/${r.id}`} className="mono">{r.id}</Link></td>
                <td><StatusBadge status={r.status} /></td>
                <td>{r.trigger.toLowerCase()}</td>
                <td><Time iso={r.createdAt} /></td>
                <td className="hide-narrow">{r.finishedAt ? duration(Date.parse(r.finishedAt) - Date.parse(r.createdAt)) : "—"}</td>
                <td className="hide-narrow">{r.dagVersion}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager
        label="DAG runs pages"
        page={pages.page}
        hasPrev={pages.hasPrev}
        hasNext={conn.pageInfo.hasNextPage}
        onPrev={pages.prev}
        onNext={() => pages.next(conn.pageInfo)}
        prev="Newer"
        next="Older"
      />
    </>
  );
}
