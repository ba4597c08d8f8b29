import { Page } from "../../ui/page";

export function JobView(_props: { id?: string | null } = {}) {
  return <Page title="Job"><p className="muted">Coming in this change.</p></Page>;
}
