/** Why a run has not started or a job makes no runs now (`Run.waiting`, `Job.problems`, `DagRunTask.waiting`; docs/waiting.md). */
import { Field, ObjectType, registerEnumType } from "type-graphql";
import { WaitCode } from "../domain/index.js";
import { DateTime } from "./scalars.js";

registerEnumType(WaitCode, {
  name: "WaitCode",
  description: "What holds a run back, or keeps a job from making runs (docs/waiting.md).",
  valuesConfig: {
    PAUSED: { description: "The job (or DAG) is paused: no fire is made until resumeJob (resumeDag)." },
    USER_CONCURRENCY_LIMIT: { description: "Every run slot of the owner's maxConcurrentRuns is held by a RUNNING run: the run is parked until one ends." },
    POOL_UNSERVED: { description: "No online executor pulls from the run's pool (or has its script interpreter)." },
    POOL_BUSY: { description: "Due and queued in a served pool: waiting for a free executor slot there." },
    WAITING_ON_PARENT: { description: "A DAG task whose parents have not all ended." },
    MAX_PARALLEL: { description: "A DAG task ready to start while its DAG run has maxParallel tasks queued or running." },
    OVERLAP: { description: "The overlap policy: held PENDING behind the job's active run (QUEUE_ONE), or the job's fires are skipped (FORBID, QUEUE_ONE full)." },
    MISFIRE: { description: "The misfire policy did not run the job's last slot (handled late: outside the catch-up window, collapsed, over the cap)." },
    BACKLOG: { description: "The owner has as many runs waiting to start as KAIROS_MAX_WAITING_RUNS allows: the job's fires are skipped (SKIPPED_BACKLOG)." },
    RATE_LIMITED: { description: "The owner's submission budget (KAIROS_RATE_SUBMISSIONS) is spent: triggerJob, backfillJob and retryRun are refused until `until`." },
    NOT_DUE: { description: "Staged ahead of its slot: no executor takes it before `until`." },
    RETRY_BACKOFF: { description: "An attempt failed; the next attempt is due at `until` (the run's retryAt)." },
    DST_SKIPPED: { description: "The job's last slot did not exist on the wall clock (spring forward) and its schedule skips such slots." },
    NO_MORE_FIRES: { description: "The schedule has no fires left (a ONCE that fired, maxFires reached, past endAt)." },
    OWNER_DELETED: { description: "The job's owner was deleted; the job was kept paused and cannot be resumed or triggered." },
  },
});

export { WaitCode };

@ObjectType({ description: "One reason a run has not started, or a job makes no runs now: what holds it and what to do about it." })
export class WaitReason {
  @Field(() => WaitCode)
  code!: WaitCode;

  @Field(() => String, { description: "What holds it and what to do about it, in words." })
  message!: string;

  @Field(() => DateTime, { nullable: true, description: "Since when it holds, when known." })
  since!: Date | null;

  @Field(() => DateTime, { nullable: true, description: "When it is expected to stop holding by itself (a retry's time, a staged run's due time, a spent budget's refill), when known." })
  until!: Date | null;
}
