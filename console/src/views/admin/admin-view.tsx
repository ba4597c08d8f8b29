import { Page } from "../../ui/page";

export function AdminView(_props: { id?: string | null } = {}) {
  return <Page title="Admin"><p className="muted">Coming in this change.</p></Page>;
}
