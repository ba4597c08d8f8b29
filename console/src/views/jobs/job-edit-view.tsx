import { Page } from "../../ui/page";

export function JobEditView(_props: { id?: string | null } = {}) {
  return <Page title="Edit job"><p className="muted">Coming in this change.</p></Page>;
}
