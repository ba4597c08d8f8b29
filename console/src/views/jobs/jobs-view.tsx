/**
 * The jobs list: the caller's jobs (an admin's: everyone's), newest first, filtered by status, tag
 * and exact name (kept in the address, so a filtered list can be shared and survives a reload),
 * paged by cursor.
 */
import type { FormEvent } from "react";
import { Link, useSearchParams } from "wouter";
import { useQuery } from "urql";
import { ConsoleJobsListDocument, type ConsoleJobsListQuery, type JobFilter, type JobStatus, type RunStatus } from "../../../../generated/client/graphql";
import { useUser } from "../../auth/session";
import { ErrorLine, Loading, Page } from "../../ui/page";
import { useCursorStack } from "../../ui/paging";
import { scheduleInWords } from "../../ui/cron-words";
import { StatusBadge } from "../../ui/status";
import { relative, Time, useNow } from "../../ui/time";
import "./jobs.css";

const PAGE = 25;
const STATUSES: JobStatus[] = ["ACTIVE", "PAUSED", "COMPLETED"];
/** The last-run filter's choices: a word in the address, the statuses it asks the API for (JobFilter.lastRunStatus). */
const LAST_RUNS: Record<string, { label: string; statuses: RunStatus[] }> = {
  problem: { label: "failed, timed out or dead", statuses: ["FAILED", "TIMED_OUT", "DEAD"] },
  succeeded: { label: "succeeded", statuses: ["SUCCEEDED"] },
  failed: { label: "failed", statuses: ["FAILED"] },
  timed_out: { label: "timed out", statuses: ["TIMED_OUT"] },
  cancelled: { label: "cancelled", statuses: ["CANCELLED"] },
  dead: { label: "dead", statuses: ["DEAD"] },
};
type Row = ConsoleJobsListQuery["jobs"]["edges"][number]["node"];

export function JobsView() {
  const isAdmin = useUser().user.role === "ADMIN";
  const [params, setParams] = useSearchParams();
  const status = params.get("status") ?? "";
  const tag = params.get("tag") ?? "";
  const name = params.get("name") ?? "";
  const lastRun = params.get("lastRun") ?? "";
  const pages = useCursorStack();
  const { after } = pages;

  const filter: JobFilter = {
    ...(STATUSES.includes(status as JobStatus) ? { status: status as JobStatus } : {}),
    ...(tag ? { tag } : {}),
    ...(name ? { name } : {}),
    ...(LAST_RUNS[lastRun] ? { lastRunStatus: LAST_RUNS[lastRun]!.statuses } : {}),
  };
  const [res] = useQuery({
    query: ConsoleJobsListDocument,
    variables: { filter, first: PAGE, after, withOwner: isAdmin },
    requestPolicy: "cache-and-network",
  });

  function apply(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const next = new URLSearchParams();
    for (const k of ["status", "lastRun", "tag", "name"]) {
      const v = String(f.get(k) ?? "").trim();
      if (v) next.set(k, v);
    }
    pages.reset();
    setParams(next);
  }

  const jobs = res.data?.jobs.edges.map((e) => e.node) ?? [];
  const page = res.data?.jobs.pageInfo;
  const filtered = !!(status || lastRun || tag || name);
  return (
    <Page title="Jobs" actions={<Link href="/jobs/new" className="button primary">New job</Link>}>
      <form className="filters" role="search" aria-label="Filter jobs" onSubmit={apply} key={params.toString()}>
        <label>
          Status
          <select name="status" defaultValue={status}>
            <option value="">Any</option>
            {STATUSES.map((s) => <option key={s} value={s}>{s.toLowerCase()}</option>)}
          </select>
        </label>
        <label>
          Last run
          <select name="lastRun" defaultValue={lastRun}>
            <option value="">Any</option>
            {Object.entries(LAST_RUNS).map(([k, v]) => <option key={k} value={k}>{v.label}</option>)}
          </select>
        </label>
        <label>
          Tag
          <input name="tag" defaultValue={tag} placeholder="e.g. nightly" />
        </label>
        <label>
          Name (exact)
          <input name="name" defaultValue={name} />
        </label>
        <button type="submit">Apply</button>
        {filtered && <Link href="/jobs" className="button" onClick={pages.reset}>Clear filters</Link>}
      </form>
      <ErrorLine error={res.error} />
      {res.fetching && !res.data && <Loading what="Loading jobs" />}
      {res.data && jobs.length === 0 && (
        <p className="muted">{filtered ? "No job matches these filters." : <>No jobs yet. <Link href="/jobs/new">Create one</Link>.</>}</p>
      )}
      {jobs.length > 0 && <JobsTable jobs={jobs} withOwner={isAdmin} />}
      <nav className="actions jobs-pager" aria-label="Pages">
        <button type="button" disabled={!pages.hasPrev} onClick={pages.prev}>Previous page</button>
        <span className="muted">Page {pages.page}</span>
        <button type="button" disabled={!page?.hasNextPage} onClick={() => pages.next(page)}>Next page</button>
      </nav>
    </Page>
  );
}

function JobsTable({ jobs, withOwner }: { jobs: Row[]; withOwner: boolean }) {
  const now = useNow(15_000);
  return (
    <div className="table-wrap">
      <table className="jobs-list">
        <caption className="jobs-sr-only">Jobs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col">Schedule</th>
            <th scope="col">Next fire</th>
            <th scope="col">Last run</th>
            <th scope="col" className="hide-narrow">Kind</th>
            {withOwner && <th scope="col" className="hide-narrow">Owner</th>}
          </tr>
        </thead>
        <tbody>
          {jobs.map((j) => {
            // The job's latest run that has ended (Job.lastRun, read with the job: no query per row).
            const last = j.lastRun;
            return (
              <tr key={j.id} data-job-id={j.id}>
                <td className="jobs-name">
                  <Link href={`/jobs/${j.id}`}>{j.name}</Link>
                  {j.tags.length > 0 && <div className="jobs-tags">{j.tags.map((t) => <span key={t} className="badge tone-muted">{t}</span>)}</div>}
                </td>
                <td><StatusBadge status={j.paused ? "PAUSED" : j.status} /></td>
                <td>
                  {scheduleInWords(j.schedule)}
                  {j.schedule.kind === "CRON" && <><br /><small className="muted mono">{j.schedule.description}</small></>}
                </td>
                <td>
                  {j.nextFireAt ? (
                    <>
                      <span>{relative(Date.parse(j.nextFireAt), now)}</span>
                      <br />
                      <small className="muted"><Time iso={j.nextFireAt} /></small>
                    </>
                  ) : <span className="muted">—</span>}
                </td>
                <td>
                  {last ? (
                    <>
                      <Link href={`/runs/${last.id}`} aria-label={`Last run: ${last.status.toLowerCase()}`}><StatusBadge status={last.status} /></Link>
                      {last.finishedAt && <><br /><small className="muted" title={last.finishedAt}>{relative(Date.parse(last.finishedAt), now)}</small></>}
                    </>
                  ) : <span className="muted">none</span>}
                </td>
                <td className="hide-narrow">{j.spec.kind.toLowerCase()}{j.spec.pool !== "default" ? <span className="muted"> · {j.spec.pool}</span> : null}</td>
                {withOwner && <td className="hide-narrow">{j.owner?.username ?? <span className="muted">deleted</span>}</td>}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
