/** Users with a cap on their concurrent runs. */
import type { Mongo } from "../mongo.js";

/** The ids of users with a maxConcurrentRuns set. */
export function limitedUserIds(mongo: Mongo): Promise<string[]> {
  return mongo.c.users.distinct("_id", { maxConcurrentRuns: { $ne: null, $exists: true } });
}
