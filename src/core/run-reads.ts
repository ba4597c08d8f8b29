/** What users read about runs: a job's history and the dead letters. */
import { listedOwner, visible } from "../auth/index.js";
import type { Principal } from "../auth/index.js";
import type { RunDoc } from "../domain/index.js";
import type { Mongo } from "../store/index.js";
import type { Page, PageQuery } from "../store/index.js";
import type { ReportedRunStatus } from "../domain/index.js";
import { findSomeRunOfJob, listDeadLetters, listRunsOfJob } from "../store/index.js";
import type { Lookups } from "./lookups.js";


export class RunReads {
  constructor(private readonly deps: { mongo: Mongo }) {}

  /**
   * Runs of one job the caller may see, newest first (by scheduled time), without their specs;
   * `status` as reported (CANCELLING included). The job is read through the request's lookups.
   */
  async ofJob(caller: Principal, jobId: string, status: ReportedRunStatus | null, page: PageQuery, lookups: Lookups): Promise<Page<RunDoc>> {
    const job = await lookups.jobIfExists(caller, jobId);
    // Runs outlive a deleted job: its id still names a history if the caller can see some run of
    // it. Otherwise the id is unknown (or someone else's): NOT_FOUND, whatever the page asked.
    if (!job) visible(caller, "job", jobId, await findSomeRunOfJob(this.deps.mongo, jobId));
    return listRunsOfJob(this.deps.mongo, jobId, listedOwner(caller), status, page);
  }

  /** Dead letters: runs whose every attempt failed, the caller's (administrators: everyone's), newest first. */
  deadLetters(caller: Principal, page: PageQuery): Promise<Page<RunDoc>> {
    return listDeadLetters(this.deps.mongo, listedOwner(caller), page);
  }
}
