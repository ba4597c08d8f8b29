import { Page } from "../../ui/page";

export function DagView(_props: { id?: string | null } = {}) {
  return <Page title="DAG"><p className="muted">Coming in this change.</p></Page>;
}
