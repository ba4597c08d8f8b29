/** What users read about runs: a job's history, a search of all their runs, and the dead letters. */
import { listedOwner, visible } from "../auth/index.js";
import type { Principal } from "../auth/index.js";
import type { RunDoc, RunTrigger } from "../domain/index.js";
import { ReportedRunStatus, ValidationError } from "../domain/index.js";
import type { Mongo } from "../store/index.js";
import type { Clock } from "../shared-state/index.js";
import type { Page, PageQuery } from "../store/index.js";
import { findDagOwner, findDagRunOwner, findSomeRunOfDagRun, findSomeRunOfJob, findSomeTaskRunOfDag, listDeadLetters, listRunsOfJob, searchRuns } from "../store/index.js";
import type { Lookups } from "./lookups.js";
import { checkPoolName } from "./spec.js";

/** Longest `name` a search of runs takes (a substring of the runs' job names). */
export const MAX_RUN_NAME_FILTER = 100;
/** Longest node id a search of runs takes (node ids are 24 hex digits). */
const MAX_NODE_ID = 128;

/** What a search of runs asks for, as the API takes it; every field given narrows it (AND). */
export interface RunSearchInput {
  /** One job's runs (its history, as {@link RunReads.ofJob} reads it). */
  jobId?: string | null;
  status?: ReportedRunStatus | null;
  /** The task runs of one DAG (their jobId is the DAG's id). */
  dagId?: string | null;
  dagRunId?: string | null;
  nodeId?: string | null;
  pool?: string | null;
  trigger?: RunTrigger | null;
  /** scheduledFor at or after it. */
  scheduledFrom?: Date | null;
  /** scheduledFor before it. */
  scheduledTo?: Date | null;
  /** Case-insensitive substring of the run's job name, matched literally. */
  name?: string | null;
  /** Runs staged ahead of their fire time (SCHEDULED): false leaves them out, true keeps only them. */
  staged?: boolean | null;
}

export class RunReads {
  constructor(private readonly deps: { mongo: Mongo; clock: Clock }) {}

  /**
   * Runs of one job the caller may see, newest first (by scheduled time), without their specs;
   * `status` as reported (CANCELLING included). The job is read through the request's lookups.
   */
  async ofJob(caller: Principal, jobId: string, status: ReportedRunStatus | null, page: PageQuery, lookups: Lookups): Promise<Page<RunDoc>> {
    await this.jobHistoryVisible(caller, jobId, lookups);
    return listRunsOfJob(this.deps.mongo, jobId, listedOwner(caller), status, page, new Date(this.deps.clock()));
  }

  /**
   * The caller's runs (administrators: everyone's) that `input` matches, newest first (by
   * scheduled time, then id; the cursors of {@link ofJob}), without their specs. A job, DAG or DAG
   * run named that the caller may not see is NOT_FOUND, as a missing one; a bad value is
   * BAD_USER_INPUT on `filter.<field>` saying what is allowed.
   */
  async search(caller: Principal, input: RunSearchInput, page: PageQuery, lookups: Lookups): Promise<Page<RunDoc>> {
    const s = checkSearch(input);
    if (s.jobId != null) await this.jobHistoryVisible(caller, s.jobId, lookups);
    if (s.dagId != null) await this.dagVisible(caller, s.dagId);
    if (s.dagRunId != null) await this.dagRunVisible(caller, s.dagRunId);
    const { dagId, name, ...rest } = s;
    const now = new Date(this.deps.clock());
    return searchRuns(this.deps.mongo, { ...rest, ownerId: listedOwner(caller), jobId: s.jobId ?? dagId ?? null, nameContains: name || null, now }, page);
  }

  /** Dead letters: runs whose every attempt failed, the caller's (administrators: everyone's), newest first. */
  deadLetters(caller: Principal, page: PageQuery): Promise<Page<RunDoc>> {
    return listDeadLetters(this.deps.mongo, listedOwner(caller), page);
  }

  /**
   * Runs outlive a deleted job: its id still names a history if the caller can see some run of
   * it. Otherwise the id is unknown (or someone else's): NOT_FOUND, whatever the page asked.
   */
  private async jobHistoryVisible(caller: Principal, jobId: string, lookups: Lookups): Promise<void> {
    const job = await lookups.jobIfExists(caller, jobId);
    if (!job) visible(caller, "job", jobId, await findSomeRunOfJob(this.deps.mongo, jobId));
  }

  /** The DAG, or (deleted) some task run of it, is the caller's: else NOT_FOUND. */
  private async dagVisible(caller: Principal, dagId: string): Promise<void> {
    const { mongo } = this.deps;
    visible(caller, "DAG", dagId, (await findDagOwner(mongo, dagId)) ?? (await findSomeTaskRunOfDag(mongo, dagId)));
  }

  /** The DAG run, or (expired) some task run of it, is the caller's: else NOT_FOUND. */
  private async dagRunVisible(caller: Principal, dagRunId: string): Promise<void> {
    const { mongo } = this.deps;
    visible(caller, "DAG run", dagRunId, (await findDagRunOwner(mongo, dagRunId)) ?? (await findSomeRunOfDagRun(mongo, dagRunId)));
  }
}

/** The search's values checked (BAD_USER_INPUT on `filter.<field>`, saying what is allowed). */
function checkSearch(input: RunSearchInput): RunSearchInput {
  const { jobId, dagId, nodeId, pool, scheduledFrom, scheduledTo, name, status, staged } = input;
  if (staged != null && status != null && staged !== (status === ReportedRunStatus.SCHEDULED)) {
    throw new ValidationError(
      "filter.staged",
      `staged: ${staged} with status ${status} matches no run: SCHEDULED is the status of the runs staged ahead of their fire time; ` +
        "give status SCHEDULED (or staged: true) for those, or another status (or staged: false) for the rest",
    );
  }
  if (jobId != null && dagId != null) {
    throw new ValidationError(
      "filter.dagId",
      "give jobId or filter.dagId, not both: a DAG's task runs are not runs of a job (their jobId is the DAG's id, so filter.dagId alone finds them)",
    );
  }
  if (nodeId != null && (nodeId.length === 0 || nodeId.length > MAX_NODE_ID)) {
    throw new ValidationError("filter.nodeId", `a node's id: 1–${MAX_NODE_ID} characters (got ${nodeId.length})`);
  }
  if (pool != null) checkPoolName("filter.pool", pool);
  for (const [field, at] of [["scheduledFrom", scheduledFrom], ["scheduledTo", scheduledTo]] as const) {
    if (at != null && Number.isNaN(at.getTime())) throw new ValidationError(`filter.${field}`, "not a valid instant: an ISO-8601 date and time, e.g. 2026-03-01T00:00:00Z");
  }
  if (scheduledFrom != null && scheduledTo != null && scheduledTo.getTime() <= scheduledFrom.getTime()) {
    throw new ValidationError(
      "filter.scheduledTo",
      `must be later than filter.scheduledFrom (got from ${scheduledFrom.toISOString()} to ${scheduledTo.toISOString()}): the window holds scheduledFor from scheduledFrom (included) to scheduledTo (excluded)`,
    );
  }
  if (name != null && name.length > MAX_RUN_NAME_FILTER) {
    throw new ValidationError(
      "filter.name",
      `at most ${MAX_RUN_NAME_FILTER} characters (got ${name.length}): a part of the job's name, matched literally and ignoring case`,
    );
  }
  return input;
}
