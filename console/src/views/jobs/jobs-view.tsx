import { Page } from "../../ui/page";

export function JobsView(_props: { id?: string | null } = {}) {
  return <Page title="Jobs"><p className="muted">Coming in this change.</p></Page>;
}
