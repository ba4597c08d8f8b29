/**
 * The audit view's filter bar: what `auditLog` can filter on. Every change goes to the address
 * (replacing it); text boxes wait for a pause in typing. Action names are suggested from the
 * entries loaded; any mutation of the API may be typed (the API names the mistake otherwise).
 */
import { useId } from "react";
import { fromLocalInput, TextFilter, toLocalInput } from "../../ui/filter-inputs";
import { activeFilterCount, NO_FILTERS, OUTCOMES, parseActions, type AuditFilters } from "./filters";

export function AuditFiltersBar(props: { filters: AuditFilters; onChange(f: AuditFilters): void; isAdmin: boolean; knownActions: string[] }) {
  const { filters, onChange } = props;
  const set = <K extends keyof AuditFilters>(k: K, v: AuditFilters[K]) => onChange({ ...filters, [k]: v });
  const active = activeFilterCount(filters);
  const listId = useId();
  return (
    <form className="filters audit-filters" role="search" aria-label="Filter the audit trail" onSubmit={(e) => e.preventDefault()}>
      <TextFilter id="af-action" label="Action" placeholder="e.g. createJob, deleteJob" list={listId} value={filters.actions.join(", ")} onCommit={(v) => set("actions", parseActions(v))} className="af-wide" />
      <datalist id={listId}>
        {props.knownActions.map((a) => <option key={a} value={a} />)}
      </datalist>
      {props.isAdmin && <TextFilter id="af-user" label="Actor: user id" value={filters.userId} onCommit={(v) => set("userId", v)} />}
      <TextFilter id="af-key" label="Actor: API key id" value={filters.apiKeyId} onCommit={(v) => set("apiKeyId", v)} />
      <TextFilter id="af-subject" label="Subject id" placeholder="a job, run, DAG, user …" value={filters.subject} onCommit={(v) => set("subject", v)} />
      <label htmlFor="af-outcome">
        Outcome
        <select id="af-outcome" value={filters.outcome} onChange={(e) => set("outcome", e.target.value)}>
          <option value="">any</option>
          {filters.outcome && !OUTCOMES.includes(filters.outcome) && <option value={filters.outcome}>{filters.outcome}</option>}
          {OUTCOMES.map((o) => <option key={o} value={o}>{o === "OK" ? "ok" : o.replace(/_/g, " ").toLowerCase()}</option>)}
        </select>
      </label>
      <label htmlFor="af-from">
        From
        <input id="af-from" type="datetime-local" value={toLocalInput(filters.from)} onChange={(e) => set("from", fromLocalInput(e.target.value))} />
      </label>
      <label htmlFor="af-to">
        Before
        <input id="af-to" type="datetime-local" value={toLocalInput(filters.to)} onChange={(e) => set("to", fromLocalInput(e.target.value))} />
      </label>
      <button type="button" onClick={() => onChange(NO_FILTERS)} disabled={active === 0}>
        Clear filters{active > 0 ? ` (${active})` : ""}
      </button>
    </form>
  );
}
