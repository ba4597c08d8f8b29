import { Page } from "../../ui/page";

export function RunView(_props: { id?: string | null } = {}) {
  return <Page title="Run"><p className="muted">Coming in this change.</p></Page>;
}
