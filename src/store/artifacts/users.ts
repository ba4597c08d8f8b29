/** Jobs that use an artifact (issue #16: a job's spec names it as `spec.artifactId`). */
import type { Mongo } from "../mongo.js";

export interface ArtifactUser {
  jobId: string;
  name: string;
  ownerId: string;
}

/** The jobs whose spec uses artifact `id`, `limit` at most. */
export async function findJobsUsingArtifact(mongo: Mongo, id: string, limit: number): Promise<ArtifactUser[]> {
  const docs = await mongo.c.jobs
    .find({ "spec.artifactId": id } as Record<string, unknown>, { projection: { _id: 1, name: 1, ownerId: 1 } })
    .limit(limit)
    .toArray();
  return docs.map((d) => ({ jobId: d._id, name: d.name, ownerId: d.ownerId }));
}
