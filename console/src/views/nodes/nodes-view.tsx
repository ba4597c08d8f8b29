/**
 * Nodes and resources: every executor node with its health, capacity, reservations, usage and
 * isolation; a node expands to the runs holding its resources. Polled (no node subscription
 * exists in the API): see use-nodes.ts.
 */
import { useUser } from "../../auth/session";
import { ErrorLine, Loading, Page } from "../../ui/page";
import { useNow } from "../../ui/time";
import { NodeCard } from "./node-card";
import { REFRESH_MS, useNodes } from "./use-nodes";
import "./nodes.css";

export function NodesView(_props: { id?: string | null } = {}) {
  const { user } = useUser();
  const { nodes, error, refresh } = useNodes();
  // Re-render every second so "last heartbeat 3 s ago" stays true between refreshes.
  useNow(1_000);
  const online = nodes?.filter((n) => n.status === "ONLINE").length ?? 0;
  return (
    <Page
      title="Nodes"
      actions={
        <>
          <span className="muted node-small">Refreshes every {REFRESH_MS / 1000} s</span>
          <button type="button" onClick={refresh}>Refresh</button>
        </>
      }
    >
      <ErrorLine error={error} />
      {!nodes ? (
        !error && <Loading what="Loading the nodes" />
      ) : nodes.length === 0 ? (
        <p className="muted">No executor node has registered. Start one with <code>kairos executor</code> (or <code>kairos dev</code>).</p>
      ) : (
        <>
          <p className="muted">{nodes.length} {nodes.length === 1 ? "node" : "nodes"}, {online} healthy.</p>
          <div className="node-list">
            {nodes.map((n) => <NodeCard key={n.id} node={n} isAdmin={user.role === "ADMIN"} />)}
          </div>
        </>
      )}
    </Page>
  );
}
