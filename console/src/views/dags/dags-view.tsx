import { Page } from "../../ui/page";

export function DagsView(_props: { id?: string | null } = {}) {
  return <Page title="DAGs"><p className="muted">Coming in this change.</p></Page>;
}
