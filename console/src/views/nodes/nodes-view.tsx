import { Page } from "../../ui/page";

export function NodesView(_props: { id?: string | null } = {}) {
  return <Page title="Nodes"><p className="muted">Coming in this change.</p></Page>;
}
