import { Page } from "../../ui/page";

export function DeadLettersView(_props: { id?: string | null } = {}) {
  return <Page title="Dead letters"><p className="muted">Coming in this change.</p></Page>;
}
