/**
 * /audit: the audit trail of mutation calls (docs/audit.md), newest first — an administrator's
 * every call, a user's their own — filtered from the address, a page at a time. A row opens what
 * the call changed; administrators can verify the hash chain.
 */
import { Fragment, useMemo, useState } from "react";
import { useLocation, useSearch } from "wouter";
import { useUser } from "../../auth/session";
import { IgnoredFiltersNotice } from "../../ui/ignored-filters";
import { ErrorLine, Loading, Page } from "../../ui/page";
import { Time } from "../../ui/time";
import { shortId } from "../runs/run-table";
import { EntryDetail, OutcomeBadge } from "./entry-detail";
import { AuditFiltersBar } from "./audit-filters";
import { filtersFromSearch, filtersToSearch, ignoredFilters, type AuditFilters } from "./filters";
import { useAuditLog, type AuditRow } from "./use-audit-log";
import { useVerifyChain, VerifyButton, VerifyResult } from "./verify-chain";
import "./audit.css";

export function AuditView() {
  const isAdmin = useUser().user.role === "ADMIN";
  const search = useSearch();
  const [, navigate] = useLocation();
  const filters = useMemo(() => filtersFromSearch(search), [search]);
  const ignored = useMemo(() => ignoredFilters(search), [search]);
  const key = filtersToSearch(filters);
  const list = useAuditLog(filters, key);
  const chain = useVerifyChain();
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const knownActions = useMemo(() => [...new Set(list.rows.map((r) => r.action))].sort(), [list.rows]);

  const setFilters = (f: AuditFilters) => {
    setOpen(new Set());
    navigate(`/audit${filtersToSearch(f)}`, { replace: true });
  };
  const toggle = (id: string) =>
    setOpen((s) => {
      const next = new Set(s);
      if (!next.delete(id)) next.add(id);
      return next;
    });

  return (
    <Page title="Audit" actions={isAdmin ? <VerifyButton verify={chain.verify} run={chain.run} /> : undefined}>
      <p className="muted">
        {isAdmin ? "Every call of a mutation, by anyone" : "The calls you made (with your password or your API keys)"}, newest first: who, when, from where, on what, how it ended, and what it changed. Secrets are never stored.
      </p>
      {isAdmin && <VerifyResult verify={chain.verify} onClose={chain.dismiss} />}
      <AuditFiltersBar filters={filters} onChange={setFilters} isAdmin={isAdmin} knownActions={knownActions} />
      <IgnoredFiltersNotice lines={ignored} />
      <ErrorLine error={list.error} />
      {!list.loaded && !list.error && <Loading what="Loading the audit trail" />}
      {list.loaded && list.rows.length === 0 && !list.error && (
        <p className="muted">{key ? "No entry matches these filters." : isAdmin ? "No calls recorded yet." : "You have made no calls yet."}</p>
      )}
      {list.rows.length > 0 && (
        <div className="table-wrap">
          <table className="audit-table" aria-label="Audit trail, newest first">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Actor</th>
                <th scope="col">Action</th>
                <th scope="col">Subject</th>
                <th scope="col">Outcome</th>
                <th scope="col" className="hide-narrow">From</th>
              </tr>
            </thead>
            <tbody>
              {list.rows.map((e) => (
                <Fragment key={e.id}>
                  <EntryRow e={e} open={open.has(e.id)} onToggle={() => toggle(e.id)} />
                  {open.has(e.id) && (
                    <tr className="audit-detail" id={`audit-detail-${e.id}`}>
                      <td colSpan={6}>
                        <EntryDetail e={e} onFilter={(f) => setFilters({ ...filters, ...f })} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.rows.length > 0 && (
        <div className="audit-foot">
          <span className="muted" role="status">
            {`${list.rows.length.toLocaleString()} entr${list.rows.length === 1 ? "y" : "ies"} loaded${list.loading ? ", loading more…" : list.hasNext ? "" : ", no more"}`}
          </span>
          {list.hasNext && <button type="button" onClick={list.loadMore} disabled={list.loading}>Load more</button>}
        </div>
      )}
    </Page>
  );
}

function EntryRow({ e, open, onToggle }: { e: AuditRow; open: boolean; onToggle(): void }) {
  return (
    <tr className={open ? "audit-row open" : "audit-row"} data-seq={e.seq} data-action={e.action}>
      <td className="audit-when"><Time iso={e.at} /></td>
      <td><Actor e={e} /></td>
      <td>
        <button type="button" className="audit-toggle" aria-expanded={open} aria-controls={open ? `audit-detail-${e.id}` : undefined} onClick={onToggle}>
          <span aria-hidden="true" className="audit-caret">{open ? "▾" : "▸"}</span> {e.action}
        </button>
      </td>
      <td><Subjects ids={e.targetIds} /></td>
      <td><OutcomeBadge outcome={e.outcome} /></td>
      <td className="hide-narrow mono">{e.address}</td>
    </tr>
  );
}

function Actor({ e }: { e: AuditRow }) {
  if (e.actorApiKeyId) {
    return (
      <span title={e.actor}>
        {e.actorUsername ?? e.actorUserId ?? "?"} <span className="badge tone-muted">API key</span> <span className="mono muted">{shortId(e.actorApiKeyId)}</span>
      </span>
    );
  }
  if (e.actorUsername || e.actorUserId) {
    return (
      <span title={e.actor}>
        {e.actorUsername ?? e.actorUserId}
        {e.actorRole === "ADMIN" && <span className="muted"> (admin)</span>}
      </span>
    );
  }
  return <span className="muted">anonymous</span>;
}

function Subjects({ ids }: { ids: string[] }) {
  if (ids.length === 0) return <span className="muted">—</span>;
  return (
    <span className="mono" title={ids.join(", ")}>
      {ids.slice(0, 2).map(shortId).join(", ")}
      {ids.length > 2 && <span className="muted"> +{ids.length - 2} more</span>}
    </span>
  );
}
