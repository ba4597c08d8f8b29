/**
 * A job's page: its schedule in words, the next fires in its zone (and the user's), its problems
 * (Job.problems: paused, an unserved pool, the concurrency limit, overlap, misfire, …), the
 * fire ledger as a heatmap, its runs (live), and its actions.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { Link } from "wouter";
import { useQuery } from "urql";
import { ConsoleJobDocument, type ConsoleJobQuery } from "../../../../generated/client/graphql";
import { ErrorLine, Loading, Page } from "../../ui/page";
import { scheduleInWords } from "../../ui/cron-words";
import { StatusBadge } from "../../ui/status";
import { Time } from "../../ui/time";
import { WaitReasons } from "../../ui/wait-reasons";
import { FireHeatmap } from "./fire-heatmap";
import { JobActions } from "./job-actions";
import { JobRuns } from "./job-runs";
import { NextFires } from "./next-fires";
import { takeWarnings } from "./warnings";
import "./jobs.css";

type Job = ConsoleJobQuery["job"];
const FIRES = 10;

export function JobView({ id }: { id: string }) {
  const [res, reexecute] = useQuery({ query: ConsoleJobDocument, variables: { id, fires: FIRES }, requestPolicy: "cache-and-network" });
  const [ledgerTick, setLedgerTick] = useState(0);
  // What createJob warned about, when this page follows the editor's save.
  const [created] = useState(() => takeWarnings(id));
  const refresh = useCallback(() => {
    reexecute({ requestPolicy: "network-only" });
    setLedgerTick((n) => n + 1);
  }, [reexecute]);
  // Run events re-read the job (next fire, fired count) and the ledger at most once a second:
  // an every-second job sends several events a second, and every read counts against the API's rate limit.
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);
  const onRunEvent = useCallback(() => {
    if (pending.current) return;
    pending.current = setTimeout(() => {
      pending.current = null;
      refresh();
    }, 1000);
  }, [refresh]);
  useEffect(() => () => void (pending.current && clearTimeout(pending.current)), []);

  const notFound = res.error?.graphQLErrors.some((e) => e.extensions?.code === "NOT_FOUND");
  if (notFound) {
    return (
      <Page title="Job not found">
        <p role="alert">No job of yours has this id: it was deleted, or it is not yours. <Link href="/jobs">Go to your jobs</Link>.</p>
      </Page>
    );
  }
  const job = res.data?.job;
  if (!job) {
    return (
      <Page title="Job">
        <ErrorLine error={res.error} />
        {res.fetching && <Loading what="Loading the job" />}
      </Page>
    );
  }
  return (
    <Page title={job.name} actions={<StatusBadge status={job.paused ? "PAUSED" : job.status} />}>
      <JobActions job={job} onChanged={refresh} />
      {created.length > 0 && (
        <section className="notice jobs-problems" role="status" aria-labelledby="created-title">
          <h2 id="created-title">Saved, with warnings</h2>
          <ul>{created.map((w) => <li key={w}>{w}</li>)}</ul>
        </section>
      )}
      <ErrorLine error={res.error} />
      <Problems job={job} />
      <div className="grid2 jobs-top">
        <Facts job={job} />
        <section className="card" aria-labelledby="fires-title">
          <h2 id="fires-title">Next fires</h2>
          <p className="jobs-schedule-words">{scheduleInWords(job.schedule)}</p>
          {scheduleInWords(job.schedule) !== job.schedule.description && <p className="muted mono jobs-schedule-api">{job.schedule.description}</p>}
          <NextFires
            fires={job.nextFires}
            zone={job.schedule.timezone}
            caption={`The next fires of ${job.name}`}
            empty={job.paused ? "Paused: nothing fires until it is resumed." : job.status === "COMPLETED" ? "Completed: its schedule has no more fires." : "No fires are coming."}
          />
        </section>
      </div>
      <FireHeatmap jobId={job.id} refresh={ledgerTick} />
      <JobRuns jobId={job.id} onEvent={onRunEvent} />
    </Page>
  );
}

/** Why the job makes no runs now, or its runs do not start: the server's Job.problems (docs/waiting.md). */
function Problems({ job }: { job: Job }) {
  return <WaitReasons reasons={job.problems} title="Problems" id="problems-title" />;
}

function Facts({ job }: { job: Job }) {
  const s = job.spec;
  return (
    <section className="card" aria-labelledby="facts-title">
      <h2 id="facts-title">Job</h2>
      <dl className="facts">
        <dt>Schedule</dt>
        <dd>{job.schedule.description} <span className="muted">({job.schedule.kind.toLowerCase()}, {job.schedule.timezone})</span></dd>
        <dt>Next fire</dt>
        <dd>{job.nextFireAt ? <><Time iso={job.nextFireAt} mode="relative" /> · <Time iso={job.nextFireAt} /></> : <span className="muted">none</span>}</dd>
        <dt>Kind</dt>
        <dd>{s.kind}{s.interpreter ? ` (${s.interpreter})` : ""}</dd>
        {s.command != null && <><dt>Command</dt><dd><code className="jobs-code">{s.command}</code></dd></>}
        {s.argv && <><dt>Argv</dt><dd><code className="jobs-code">{JSON.stringify(s.argv)}</code></dd></>}
        {s.http && <><dt>Request</dt><dd><code className="jobs-code">{s.http.method} {s.http.url}</code></dd></>}
        {s.args && s.args.length > 0 && <><dt>Arguments</dt><dd><code className="jobs-code">{JSON.stringify(s.args)}</code></dd></>}
        <dt>Pool</dt>
        <dd>{s.pool} <span className="muted">({job.health.servingNodes} node{job.health.servingNodes === 1 ? "" : "s"} serving, {job.health.queuedRuns} queued)</span></dd>
        <dt>Timeout</dt>
        <dd>{s.timeout}</dd>
        <dt>Retry</dt>
        <dd>{job.retry.maxAttempts <= 1 ? "no retries" : `${job.retry.maxAttempts} attempts, ${job.retry.backoff.toLowerCase()} from ${job.retry.initial} to ${job.retry.max}`}</dd>
        <dt>Priority</dt>
        <dd>{job.priority}</dd>
        <dt>Resources</dt>
        <dd>{s.resources.cpu} CPU, {s.resources.memoryMb} MiB{s.resources.pids ? `, ${s.resources.pids} processes` : ""}{s.resources.diskMb ? `, ${s.resources.diskMb} MiB disk` : ""}</dd>
        <dt>Policies</dt>
        <dd>overlap {job.overlap.toLowerCase()}, misfire {job.misfire.toLowerCase().replace("_", " ")}, catch-up {job.catchupWindow}</dd>
        {job.tags.length > 0 && <><dt>Tags</dt><dd className="jobs-tags">{job.tags.map((t) => <span key={t} className="badge tone-muted">{t}</span>)}</dd></>}
        {job.description && <><dt>Description</dt><dd>{job.description}</dd></>}
        <dt>Fired</dt>
        <dd>{job.firedCount} time{job.firedCount === 1 ? "" : "s"}{job.lastSlotAt ? <>, last slot <Time iso={job.lastSlotAt} /></> : null}</dd>
        <dt>Created</dt>
        <dd><Time iso={job.createdAt} /> <span className="muted">(version {job.version})</span></dd>
      </dl>
    </section>
  );
}
