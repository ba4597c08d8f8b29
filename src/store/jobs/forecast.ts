/**
 * The jobs a load forecast reads (core/forecast.ts): active, not paused, next fire before the end
 * of the window; at most `limit`. Everyone's by the `nextFireAt` index, soonest first (a cut keeps
 * the soonest); one owner's by `owner_id`, in id order.
 */
import type { Filter } from "mongodb";
import type { JobDoc } from "../../domain/index.js";
import type { Mongo } from "../mongo.js";

export type ForecastJobDoc = Pick<
  JobDoc,
  "_id" | "ownerId" | "schedule" | "firedCount" | "handledThrough" | "nextSlotAt" | "nextFireAt" | "rescheduledTo" | "dagId"
> & { spec: { pool: string } };

const PROJECTION = {
  _id: 1, ownerId: 1, schedule: 1, firedCount: 1, handledThrough: 1, nextSlotAt: 1, nextFireAt: 1, rescheduledTo: 1, dagId: 1, "spec.pool": 1,
} as const;

export interface ForecastJobQuery {
  /** One owner's jobs, or null for everyone's. */
  ownerId: string | null;
  /** Only jobs whose next fire is before this instant. */
  until: Date;
  /** Jobs of this pool, and every scheduled DAG (its tasks' pools are read with the DAG). */
  pool: string | null;
  limit: number;
}

export async function findForecastJobs(mongo: Mongo, q: ForecastJobQuery): Promise<ForecastJobDoc[]> {
  const filter = {
    ...(q.ownerId === null ? {} : { ownerId: q.ownerId }),
    status: "ACTIVE",
    paused: false,
    nextFireAt: { $lt: q.until },
    ...(q.pool === null ? {} : { $or: [{ "spec.pool": q.pool }, { dagId: { $type: "string" } }] }),
  } as Filter<JobDoc>;
  const sort: Record<string, 1> = q.ownerId === null ? { nextFireAt: 1 } : { ownerId: 1, _id: 1 };
  const docs = await mongo.c.jobs.find(filter, { projection: PROJECTION, sort, limit: q.limit }).toArray();
  return docs as ForecastJobDoc[];
}
