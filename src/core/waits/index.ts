/** Why a run has not started and why a job makes no runs now (Run.waiting, Job.problems; docs/waiting.md). */
export { WaitReads, WaitService, type WaitDeps } from "./wait-reads.js";
export { runWaits, WAITING_RUN_STATUSES, type RunWaitFacts } from "./run-waits.js";
export { jobProblems, type JobProblemFacts } from "./job-problems.js";
export { taskWaits } from "./task-waits.js";
