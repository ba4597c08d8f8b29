/**
 * What a job document stands for, in the words messages use: a job, or (a DAG's timer job, `dagId`
 * set) the DAG whose schedule it carries. Messages are worded from this, never patched afterwards.
 */

/** The words for a change of `job` in a reason: a DAG's timer job carries the DAG's schedule, so a user changed the DAG. */
export function changedSubject(job: { dagId?: string | null }): "the job" | "the DAG" {
  return job.dagId ? "the DAG" : "the job";
}
