/**
 * Nodes and resources: the executor nodes, a page at a time by name (a pool and a state narrow
 * them), with their health, capacity, reservations, usage and isolation; a node expands to the
 * runs holding its resources. Polled (no node subscription exists in the API): see use-nodes.ts.
 */
import { useUser } from "../../auth/session";
import { ErrorLine, Loading, Page } from "../../ui/page";
import { useNow } from "../../ui/time";
import { Pager } from "../dags/pager";
import { NodeCard } from "./node-card";
import { REFRESH_MS, STATE_CHOICES, useNodes } from "./use-nodes";
import "./nodes.css";

export function NodesView(_props: { id?: string | null } = {}) {
  const { user } = useUser();
  const list = useNodes();
  const { nodes, error, refresh } = list;
  // Re-render every second so "last heartbeat 3 s ago" stays true between refreshes.
  useNow(1_000);
  const online = nodes?.filter((n) => n.status === "ONLINE").length ?? 0;
  const several = list.hasNext || list.hasPrev;
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
      <form className="filters node-filters" role="search" aria-label="Filter nodes" onSubmit={(e) => e.preventDefault()}>
        <label htmlFor="nf-pool">
          Pool
          <input id="nf-pool" type="search" value={list.pool} onChange={(e) => list.setPool(e.target.value)} placeholder="any pool" maxLength={64} autoComplete="off" spellCheck={false} />
        </label>
        <label htmlFor="nf-state">
          State
          <select id="nf-state" value={list.state} onChange={(e) => list.setState(e.target.value)}>
            {STATE_CHOICES.map((c) => <option key={c.value} value={c.value}>{c.label}</option>)}
          </select>
        </label>
      </form>
      <ErrorLine error={error} />
      {!nodes ? (
        !error && <Loading what="Loading the nodes" />
      ) : nodes.length === 0 && list.page === 1 ? (
        list.filtered ? (
          <p className="muted">No node matches these filters.</p>
        ) : (
          <p className="muted">No executor node has registered. Start one with <code>kairos executor</code> (or <code>kairos dev</code>).</p>
        )
      ) : (
        <>
          <p className="muted">
            {nodes.length} {nodes.length === 1 ? "node" : "nodes"}{several ? " on this page" : ""}, {online} healthy.
          </p>
          <div className="node-list">
            {nodes.map((n) => <NodeCard key={n.id} node={n} isAdmin={user.role === "ADMIN"} />)}
          </div>
        </>
      )}
      <Pager label="Nodes pages" page={list.page} hasPrev={list.hasPrev} hasNext={list.hasNext} onPrev={list.prev} onNext={list.next} />
    </Page>
  );
}
