/**
 * `kairos why RUN|JOB`: why a run has not started or a job has not fired, from what the API gives
 * today: the job's pause, schedule and health (is its pool served), the fire ledger's outcomes
 * (overlap, misfire, backlog, pause, DST), the run's status, retry time and history, and for a
 * DAG run, which parents its waiting tasks wait on. What the API does not tell (how many runs of
 * the user's concurrency limit are taken, rate limits) is listed as unknown: an API field
 * (`Run.waitingReason` / `Job.problems`, see docs/cli.md) would answer it for the console too.
 */
import { CliDagDocument, CliDagRunDocument, CliDescribeJobDocument, CliRunWhyDocument } from "../../generated/client/graphql.js";
import { ApiError } from "./client.js";
import type { Ctx } from "./context.js";
import { relative } from "./output.js";
import { findJob } from "./resolve.js";

export interface Reason {
  code: string;
  message: string;
}

export interface WhyAnswer {
  subject: string;
  kind: "run" | "job" | "dagRun";
  id: string;
  reasons: Reason[];
  unknown: string[];
}

const LEDGER_REASON: Record<string, string> = {
  SKIPPED_OVERLAP: "OVERLAP",
  MISSED: "MISFIRE",
  SKIPPED_BACKLOG: "BACKLOG",
  SKIPPED_PAUSED: "PAUSED",
  SKIPPED_DST: "DST",
};

const missing = (e: unknown) => e instanceof ApiError && (e.code === "NOT_FOUND" || e.code === "BAD_USER_INPUT");
const LIMIT_UNKNOWN = "whether your concurrency limit is reached (the API gives the limit, not how many of your runs hold it)";
const RATE_UNKNOWN = "whether a rate limit holds it back (not exposed by the API)";

export async function explain(ctx: Ctx, ref: string): Promise<WhyAnswer> {
  const api = await ctx.api();
  const now = ctx.io.now();
  const me = await ctx.whoami();
  try {
    const { run } = await api.request(CliRunWhyDocument, { id: ref });
    const reasons: Reason[] = [];
    const unknown: string[] = [];
    const job = run.job;
    if (["SUCCEEDED", "FAILED", "TIMED_OUT", "CANCELLED", "DEAD"].includes(run.status)) {
      reasons.push({ code: "ENDED", message: `it has ended: ${run.status}${run.exitCode != null ? ` with exit code ${run.exitCode}` : ""}${run.error ? ` (${run.error})` : ""}` });
    } else if (run.status === "RUNNING" || run.status === "CANCELLING") {
      reasons.push({ code: "STARTED", message: `it has started: ${run.status} on node ${run.nodeId ?? "?"} since ${relative(run.startedAt, now)}` });
    } else {
      if (run.status === "RETRY_SCHEDULED") reasons.push({ code: "RETRY_BACKOFF", message: `attempt ${run.attempt} failed; the next is due ${relative(run.retryAt, now)} (${run.retryAt})` });
      if (Date.parse(run.scheduledFor) > now) reasons.push({ code: "NOT_DUE", message: `it is staged for its slot at ${run.scheduledFor} (${relative(run.scheduledFor, now)})` });
      if (job?.paused) reasons.push({ code: "PAUSED", message: `its job ${job.name} is paused` });
      if (job && !job.health.poolServed) reasons.push({ code: "NO_EXECUTOR", message: `no online executor serves its pool "${run.pool}"` });
      if (job && job.health.queuedRuns > 1) reasons.push({ code: "QUEUE", message: `${job.health.queuedRuns} runs of ${job.name} are waiting, the oldest since ${relative(job.health.oldestQueuedAt, now)}` });
      const last = run.history.at(-1);
      if (last?.reason) reasons.push({ code: "HISTORY", message: `last transition ${last.status} ${relative(last.at, now)}: ${last.reason}` });
      if (me.maxConcurrentRuns != null) unknown.push(`${LIMIT_UNKNOWN}; your limit: ${me.maxConcurrentRuns}`);
      else if (me.role !== "ADMIN") unknown.push(LIMIT_UNKNOWN);
      unknown.push(RATE_UNKNOWN);
      if (!reasons.length) reasons.push({ code: "WAITING", message: `it is ${run.status} (queued ${relative(run.queuedAt, now)}) and the API names no cause` });
    }
    return { subject: `run ${run.id} of ${run.jobName}: ${run.status}`, kind: "run", id: run.id, reasons, unknown };
  } catch (e) {
    if (!missing(e)) throw e;
  }
  try {
    const { dagRun } = await api.request(CliDagRunDocument, { id: ref });
    const { dag } = await api.request(CliDagDocument, { id: dagRun.dagId });
    const state = new Map(dagRun.tasks.map((t) => [t.key, t.status]));
    const reasons: Reason[] = [];
    for (const t of dagRun.tasks.filter((x) => x.status === "PENDING")) {
      const parents = dag.tasks.find((d) => d.key === t.key)?.dependsOn ?? [];
      const open = parents.filter((p) => !["SUCCEEDED", "FAILED", "SKIPPED", "UPSTREAM_FAILED", "CANCELLED"].includes(state.get(p) ?? ""));
      if (open.length) reasons.push({ code: "WAITING_ON_PARENT", message: `task ${t.key} waits on ${open.map((p) => `${p} (${state.get(p) ?? "?"})`).join(", ")}` });
      else if (t.note) reasons.push({ code: "TASK_NOTE", message: `task ${t.key}: ${t.note}` });
    }
    if (dag.paused) reasons.push({ code: "PAUSED", message: `DAG ${dag.name} is paused` });
    for (const w of dag.warnings) reasons.push({ code: "NO_EXECUTOR", message: w });
    if (!reasons.length) reasons.push({ code: dagRun.status === "RUNNING" ? "RUNNING" : "ENDED", message: `the DAG run is ${dagRun.status}` });
    return { subject: `DAG run ${dagRun.id} of ${dagRun.dagName}: ${dagRun.status}`, kind: "dagRun", id: dagRun.id, reasons, unknown: [] };
  } catch (e) {
    if (!missing(e)) throw e;
  }
  const found = await findJob(ctx, ref);
  const { job } = await api.request(CliDescribeJobDocument, { id: found.id, fires: 1, runs: 1, ledger: 10 });
  const reasons: Reason[] = [];
  if (job.paused) reasons.push({ code: "PAUSED", message: "the job is paused (kairos resume)" });
  if (job.status === "COMPLETED") reasons.push({ code: "COMPLETED", message: "its schedule has no fires left (ONCE that fired, maxFires reached, or past endAt)" });
  else if (!job.paused && job.nextFireAt) reasons.push({ code: "NEXT_FIRE", message: `its next fire is ${relative(job.nextFireAt, now)} (${job.nextFireAt}; ${job.schedule.description})` });
  if (!job.health.poolServed) reasons.push({ code: "NO_EXECUTOR", message: `no online executor serves pool "${job.spec.pool}": its runs wait` });
  if (job.health.queuedRuns > 0) reasons.push({ code: "QUEUE", message: `${job.health.queuedRuns} of its runs are waiting to start, the oldest since ${relative(job.health.oldestQueuedAt, now)}` });
  for (const f of job.fires.edges.map((x) => x.node)) {
    const code = LEDGER_REASON[f.outcome];
    if (code) reasons.push({ code, message: `slot ${f.slotAt}: ${f.outcome}${f.reason ? ` (${f.reason})` : ""}${code === "OVERLAP" ? `, overlap policy ${job.overlap}` : code === "MISFIRE" ? `, misfire policy ${job.misfire}` : ""}` });
  }
  for (const w of new Set([...job.warnings, ...job.health.warnings])) reasons.push({ code: "WARNING", message: w });
  const unknown = job.health.queuedRuns > 0 ? [me.maxConcurrentRuns != null ? `${LIMIT_UNKNOWN}; your limit: ${me.maxConcurrentRuns}` : LIMIT_UNKNOWN, RATE_UNKNOWN] : [];
  return { subject: `job ${job.name} (${job.id}): ${job.paused ? "PAUSED" : job.status}`, kind: "job", id: job.id, reasons, unknown };
}
