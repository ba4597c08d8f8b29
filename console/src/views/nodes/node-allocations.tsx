/** A node's running attempts: which runs hold its CPU and memory, since when. */
import { Link } from "wouter";
import { ErrorLine, Loading } from "../../ui/page";
import { Time, useNow } from "../../ui/time";
import { useNodeAllocations } from "./use-nodes";
import { cores, mib } from "./node-words";

export function NodeAllocations({ nodeId, nodeName, isAdmin }: { nodeId: string; nodeName: string; isAdmin: boolean }) {
  const { allocations, more, error } = useNodeAllocations(nodeId);
  // "12 s ago" stays true between refreshes.
  useNow(1_000);
  if (error && !allocations) return <ErrorLine error={error} />;
  if (!allocations) return <Loading what="Loading the running attempts" />;
  return (
    <div className="node-allocs">
      <ErrorLine error={error} />
      {!isAdmin && <p className="muted node-small">Only your own runs are listed; the count above includes everyone's.</p>}
      {allocations.length === 0 ? (
        <p className="muted">No attempt of {isAdmin ? "any user" : "yours"} is running on {nodeName}.</p>
      ) : (
        <div className="table-wrap">
          <table aria-label={`Running attempts on ${nodeName}`}>
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Since</th>
                <th scope="col">CPU</th>
                <th scope="col">Memory</th>
                <th scope="col" className="hide-narrow">Processes</th>
                <th scope="col" className="hide-narrow">Disk</th>
              </tr>
            </thead>
            <tbody>
              {allocations.map((a) => (
                <tr key={a.runId}>
                  <td><Link href={`/runs/${a.runId}`} className="mono">{a.runId}</Link></td>
                  <td>
                    <Time iso={a.since} mode="relative" />
                  </td>
                  <td>{cores(a.cpu)}</td>
                  <td>{mib(a.memoryMb)}</td>
                  <td className="hide-narrow">{a.pids}</td>
                  <td className="hide-narrow">{mib(a.diskMb)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {more && <p className="muted node-small">Showing the newest {allocations.length}; more are running.</p>}
    </div>
  );
}
