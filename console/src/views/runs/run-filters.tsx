/**
 * The runs list's filter bar. Every change goes to the address (replacing it, so Back leaves the
 * list rather than undoing each keystroke); text boxes wait for a pause in typing.
 */
import { useState } from "react";
import { fromLocalInput, TextFilter, toLocalInput } from "../../ui/filter-inputs";
import { activeFilterCount, NO_FILTERS, STATUSES, TRIGGERS, type RunFilters } from "./filters";
import { NodePicker } from "./node-picker";

export function RunFiltersBar({ filters, onChange }: { filters: RunFilters; onChange(f: RunFilters): void }) {
  const set = <K extends keyof RunFilters>(k: K, v: RunFilters[K]) => onChange({ ...filters, [k]: v });
  const active = activeFilterCount(filters);
  const more = active - (filters.name ? 1 : 0) - (filters.status ? 1 : 0);
  // The rarer filters fold away on a phone (unless one is set); open on wider screens.
  const [open, setOpen] = useState(() => more > 0 || !window.matchMedia("(max-width: 700px)").matches);

  return (
    <form className="filters runs-filters" role="search" aria-label="Filter runs" onSubmit={(e) => e.preventDefault()}>
      <TextFilter id="rf-name" label="Name" type="search" placeholder="part of the job's name" value={filters.name} onCommit={(v) => set("name", v)} className="rf-wide" />
      <label htmlFor="rf-status">
        Status
        <select id="rf-status" value={filters.status ?? ""} onChange={(e) => set("status", (e.target.value || null) as RunFilters["status"])}>
          <option value="">any</option>
          {STATUSES.map((s) => <option key={s} value={s}>{s.replace(/_/g, " ").toLowerCase()}</option>)}
        </select>
      </label>
      <details className="more-filters" open={open} onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
        <summary>More filters{more > 0 ? ` (${more} set)` : ""}</summary>
        <div className="more-body">
      <label htmlFor="rf-trigger">
        Trigger
        <select id="rf-trigger" value={filters.trigger ?? ""} onChange={(e) => set("trigger", (e.target.value || null) as RunFilters["trigger"])}>
          <option value="">any</option>
          {TRIGGERS.map((t) => <option key={t} value={t}>{t.toLowerCase()}</option>)}
        </select>
      </label>
      <TextFilter id="rf-job" label="Job id" value={filters.jobId} onCommit={(v) => set("jobId", v)} />
      <TextFilter id="rf-dag" label="DAG id" value={filters.dagId} onCommit={(v) => set("dagId", v)} />
      {filters.dagRunId && <TextFilter id="rf-dagrun" label="DAG run id" value={filters.dagRunId} onCommit={(v) => set("dagRunId", v)} />}
      <NodePicker id="rf-node" value={filters.nodeId} onChange={(v) => set("nodeId", v)} />
      <TextFilter id="rf-pool" label="Pool" value={filters.pool} onCommit={(v) => set("pool", v)} />
      <label htmlFor="rf-from">
        Scheduled from
        <input id="rf-from" type="datetime-local" value={toLocalInput(filters.from)} onChange={(e) => set("from", fromLocalInput(e.target.value))} />
      </label>
      <label htmlFor="rf-to">
        Scheduled before
        <input id="rf-to" type="datetime-local" value={toLocalInput(filters.to)} onChange={(e) => set("to", fromLocalInput(e.target.value))} />
      </label>
        </div>
      </details>
      <button type="button" onClick={() => onChange(NO_FILTERS)} disabled={active === 0}>
        Clear filters{active > 0 ? ` (${active})` : ""}
      </button>
    </form>
  );
}
