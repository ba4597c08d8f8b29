import { Page } from "../../ui/page";

export function RunsView(_props: { id?: string | null } = {}) {
  return <Page title="Runs"><p className="muted">Coming in this change.</p></Page>;
}
