/** The types of forecast (issue #31; docs/cluster-stats.md, "Forecast"). */
import { Field, Float, ID, Int, ObjectType } from "type-graphql";
import { DateTime } from "./scalars.js";

@ObjectType()
export class ForecastMinute {
  @Field(() => DateTime, { description: "The minute's start." })
  at!: Date;

  @Field(() => Float, { description: "Runs due in it (a jittered job's runs count as the share of its jitter range in the minute)." })
  runs!: number;
}

@ObjectType()
export class ForecastPool {
  @Field(() => String)
  pool!: string;

  @Field(() => Float)
  total!: number;

  @Field(() => Float, { description: "The busiest minute's runs." })
  peak!: number;

  @Field(() => DateTime, { nullable: true })
  peakAt!: Date | null;

  @Field(() => Float, { description: "The median minute's runs (minutes with none included)." })
  median!: number;

  @Field(() => [ForecastMinute], { description: "The minutes with runs due, in order; those with none are left out." })
  minutes!: ForecastMinute[];
}

@ObjectType({ description: "A minute of a pool holding far more runs than its median minute, and the jobs that meet there." })
export class ForecastHotspot {
  @Field(() => String)
  pool!: string;

  @Field(() => DateTime, { description: "The first minute these jobs meet in the window." })
  at!: Date;

  @Field(() => [DateTime], { description: "Every minute they meet in the window." })
  minutes!: Date[];

  @Field(() => Float)
  runs!: number;

  @Field(() => Float, { description: "The pool's median minute." })
  median!: number;

  @Field(() => Int, { description: "Jobs due in that minute." })
  jobCount!: number;

  @Field(() => [ID], { description: "The first 50 of them." })
  jobIds!: string[];

  @Field(() => String, { description: "A spread (ISO-8601) that would even them out." })
  suggestedSpread!: string;

  @Field(() => String)
  suggestion!: string;
}

@ObjectType({ description: "Runs due per minute and pool from the armed timers and schedules: yours, or the cluster's (administrators)." })
export class Forecast {
  @Field(() => String, { description: "CLUSTER (an administrator) or OWN." })
  scope!: string;

  @Field(() => DateTime)
  from!: Date;

  @Field(() => DateTime)
  to!: Date;

  @Field(() => [ForecastPool])
  pools!: ForecastPool[];

  @Field(() => [ForecastHotspot], { description: "At most 20, the largest first." })
  hotspots!: ForecastHotspot[];

  @Field(() => Int)
  jobsRead!: number;

  @Field(() => Int, { description: "The most jobs one forecast reads." })
  maxJobs!: number;

  @Field(() => Boolean, { description: "More jobs are due in the window than were read: see notes." })
  jobsCapped!: boolean;

  @Field(() => Int, { description: "Fires counted." })
  slots!: number;

  @Field(() => Boolean)
  slotsCapped!: boolean;

  @Field(() => [String], { description: "What the figures leave out or where they were cut short." })
  notes!: string[];
}
