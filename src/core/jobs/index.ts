/** Jobs from the user's side: the JobService and what it takes and gives. */
export { JobService } from "./service.js";
export type { BackfillOutcome, DagTimerActor, JobActor, JobInput, JobPatch, JobServiceDeps, JobSpecInput, OwnerJobs, Submit } from "./types.js";
export type { ComingFire, JobHealth, JobListFilter, SchedulePreview } from "./reads.js";
export { MAX_BACKFILL, backfillSlots } from "./triggers.js";
export { comingFires } from "./reads.js";
export { MAX_PRIORITY, validateCatchup, validateDescription, validateName, validatePriority } from "./fields.js";
export { PoolNodes } from "./pool-nodes.js";
