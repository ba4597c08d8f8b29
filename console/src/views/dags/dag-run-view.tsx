import { Page } from "../../ui/page";

export function DagRunView(_props: { id?: string | null } = {}) {
  return <Page title="DAG run"><p className="muted">Coming in this change.</p></Page>;
}
