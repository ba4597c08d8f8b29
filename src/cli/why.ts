/**
 * `kairos why RUN|JOB|DAGRUN`: why a run has not started, a job makes no runs, or a DAG run's
 * tasks wait, from the API's own answer: `Run.waiting`, `Job.problems` and `DagRunTask.waiting`
 * (docs/waiting.md: the user's concurrency limit, an unserved pool, overlap, misfire, a spent
 * submission budget, …), with the run's status and last transition, and the job's next fire and
 * queue. The console shows the same reasons.
 */
import { CliDagRunWhyDocument, CliJobWhyDocument, CliRunWhyDocument } from "../../generated/client/graphql.js";
import { ApiError } from "./client.js";
import { CliError } from "./errors.js";
import type { Ctx } from "./context.js";
import { relative } from "./output.js";
import { findJob } from "./resolve.js";

export interface Reason {
  code: string;
  message: string;
  since?: string | null;
  until?: string | null;
}

export interface WhyAnswer {
  subject: string;
  kind: "run" | "job" | "dagRun";
  id: string;
  reasons: Reason[];
}

const missing = (e: unknown) => e instanceof ApiError && (e.code === "NOT_FOUND" || e.code === "BAD_USER_INPUT");
/** An API reason as printed: its message, and since / until in relative time when known. */
function fromApi(r: { code: string; message: string; since?: string | null; until?: string | null }, now: number, prefix = ""): Reason {
  const when = [r.since ? `since ${relative(r.since, now)}` : null, r.until ? `until ${relative(r.until, now)}` : null].filter(Boolean).join(", ");
  return { code: r.code, message: `${prefix}${r.message}${when ? ` [${when}]` : ""}`, since: r.since ?? null, until: r.until ?? null };
}

/** The answer, every reason with since and until (null when not known), as `-o json` promises. */
export async function explain(ctx: Ctx, ref: string): Promise<WhyAnswer> {
  const answer = await reasonsFor(ctx, ref);
  return { ...answer, reasons: answer.reasons.map((r) => ({ code: r.code, message: r.message, since: r.since ?? null, until: r.until ?? null })) };
}

async function reasonsFor(ctx: Ctx, ref: string): Promise<WhyAnswer> {
  const api = await ctx.api();
  const now = ctx.io.now();
  try {
    const { run } = await api.request(CliRunWhyDocument, { id: ref });
    const reasons: Reason[] = [];
    if (["SUCCEEDED", "FAILED", "TIMED_OUT", "CANCELLED", "DEAD", "WITHDRAWN"].includes(run.status)) {
      reasons.push({ code: "ENDED", message: `it has ended: ${run.status}${run.exitCode != null ? ` with exit code ${run.exitCode}` : ""}${run.error ? ` (${run.error})` : ""}` });
    } else if (run.status === "RUNNING" || run.status === "CANCELLING") {
      reasons.push({ code: "STARTED", message: `it has started: ${run.status} on node ${run.node?.name ?? run.nodeId ?? "?"} since ${relative(run.startedAt, now)}` });
    } else {
      for (const w of run.waiting) reasons.push(fromApi(w, now));
      const last = run.history.at(-1);
      if (last?.reason) reasons.push({ code: "HISTORY", message: `last transition ${last.status} ${relative(last.at, now)}: ${last.reason}` });
      if (!run.waiting.length) reasons.push({ code: "WAITING", message: `it is ${run.status} (queued ${relative(run.queuedAt, now)}) and the server names no cause` });
    }
    return { subject: `run ${run.id} of ${run.jobName}: ${run.status}`, kind: "run", id: run.id, reasons };
  } catch (e) {
    if (!missing(e)) throw e;
  }
  try {
    const first = (await api.request(CliDagRunWhyDocument, { id: ref })).dagRun;
    const tasks = first.tasks.edges.map((e) => e.node);
    for (let page = first.tasks.pageInfo; page.hasNextPage; ) {
      const next = (await api.request(CliDagRunWhyDocument, { id: ref, after: page.endCursor })).dagRun.tasks;
      tasks.push(...next.edges.map((e) => e.node));
      page = next.pageInfo;
    }
    const reasons: Reason[] = [];
    for (const t of tasks) {
      const name = `task ${t.key}${t.mapIndex != null ? `[${t.mapIndex}]` : ""}: `;
      for (const w of t.waiting) reasons.push(fromApi(w, now, name));
      if (!t.waiting.length && t.status === "PENDING" && t.note) reasons.push({ code: "TASK_NOTE", message: `${name}${t.note}` });
    }
    if (!reasons.length) reasons.push({ code: first.status === "RUNNING" ? "RUNNING" : "ENDED", message: `the DAG run is ${first.status}` });
    return { subject: `DAG run ${first.id} of ${first.dagName}: ${first.status}`, kind: "dagRun", id: first.id, reasons };
  } catch (e) {
    if (!missing(e)) throw e;
  }
  const found = await findJob(ctx, ref).catch((e: unknown) => {
    // Tried as a run and a DAG run already: the error names all three, not only the job.
    if (e instanceof CliError && /not found: no job of yours/.test(e.message)) {
      throw new CliError(`"${ref}" not found: no run or DAG run of yours has that id, and no job of yours has that name or id`);
    }
    throw e;
  });
  const { job } = await api.request(CliJobWhyDocument, { id: found.id });
  const reasons: Reason[] = job.problems.map((p) => fromApi(p, now));
  if (!job.paused && job.status !== "COMPLETED" && job.nextFireAt) reasons.push({ code: "NEXT_FIRE", message: `its next fire is ${relative(job.nextFireAt, now)} (${job.nextFireAt}; ${job.schedule.description})` });
  if (job.health.queuedRuns > 0) reasons.push({ code: "QUEUE", message: `${job.health.queuedRuns === 1 ? "1 of its runs is" : `${job.health.queuedRuns} of its runs are`} waiting to start, the oldest since ${relative(job.health.oldestQueuedAt, now)} (kairos why RUN for one of them)` });
  return { subject: `job ${job.name} (${job.id}): ${job.paused ? "PAUSED" : job.status}`, kind: "job", id: job.id, reasons };
}
