import { Field, ID, InputType } from "type-graphql";
import { RunTrigger } from "./enums.js";
import { DateTime } from "./scalars.js";

@InputType({ description: "Narrows a search of runs (Query.runs): every field given must hold." })
export class RunFilter {
  @Field(() => ID, { nullable: true, description: "The task runs of this DAG (their jobId is the DAG's id). Not with jobId." })
  dagId?: string | null;

  @Field(() => ID, { nullable: true, description: "The task runs of this DAG run." })
  dagRunId?: string | null;

  @Field(() => ID, { nullable: true, description: "Runs whose current or last attempt ran on this executor node." })
  nodeId?: string | null;

  @Field(() => String, { nullable: true, description: "Runs of this pool." })
  pool?: string | null;

  @Field(() => RunTrigger, { nullable: true })
  trigger?: RunTrigger | null;

  @Field(() => DateTime, { nullable: true, description: "scheduledFor at or after this instant (included)." })
  scheduledFrom?: Date | null;

  @Field(() => DateTime, { nullable: true, description: "scheduledFor before this instant (excluded); later than scheduledFrom." })
  scheduledTo?: Date | null;

  @Field(() => String, {
    nullable: true,
    description: "Part of the run's job name (a DAG task's run: `<dag>/<task>`), matched literally and ignoring case; at most 100 characters. Empty: any.",
  })
  name?: string | null;

  @Field(() => Boolean, {
    nullable: true,
    description:
      "Runs staged ahead of their fire time (status SCHEDULED): false leaves them out, true keeps only them. Absent: both. " +
      "(Withdrawn runs, taken back before their time by a pause or an edit, are listed only when status is WITHDRAWN.)",
  })
  staged?: boolean | null;
}
