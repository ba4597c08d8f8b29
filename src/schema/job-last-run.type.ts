import { Field, ID, ObjectType } from "type-graphql";
import { RunStatus, RunTrigger } from "./enums.js";
import { DateTime } from "./scalars.js";

@ObjectType({
  description:
    "How a job's latest run went: its latest-scheduled run that has ended (SUCCEEDED, FAILED, TIMED_OUT, CANCELLED or DEAD). " +
    "Runs still to end, and runs withdrawn before their fire time, do not count. Kept on the job as each run ends, so a page of jobs reads no runs.",
})
export class JobLastRun {
  @Field(() => ID, { description: "The run's id (Query.run; the run may be gone after the store's retention)." })
  id!: string;

  @Field(() => RunStatus)
  status!: RunStatus;

  @Field(() => RunTrigger)
  trigger!: RunTrigger;

  @Field(() => DateTime, { description: "The slot the run was for: last runs are ordered by it, so a run ending after a later-scheduled one does not replace it." })
  scheduledFor!: Date;

  @Field(() => DateTime, { nullable: true })
  finishedAt!: Date | null;
}
