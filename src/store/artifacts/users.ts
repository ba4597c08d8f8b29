/** Jobs and DAGs that use an artifact (a job's spec names it as `spec.artifactId`, a DAG task's as `tasks.spec.artifactId`). */
import type { Mongo } from "../mongo.js";

export interface ArtifactUser {
  /** "job" or "DAG": what the user should change before deleting the artifact. */
  kind: "job" | "DAG";
  id: string;
  name: string;
  ownerId: string;
}

/** The jobs whose spec, then the DAGs one of whose tasks' specs, uses artifact `id`: `limit` at most in all. */
export async function findArtifactUsers(mongo: Mongo, id: string, limit: number): Promise<ArtifactUser[]> {
  const jobs = await mongo.c.jobs
    .find({ "spec.artifactId": id } as Record<string, unknown>, { projection: { _id: 1, name: 1, ownerId: 1 } })
    .limit(limit)
    .toArray();
  const out: ArtifactUser[] = jobs.map((d) => ({ kind: "job", id: d._id, name: d.name, ownerId: d.ownerId }));
  if (out.length >= limit) return out;
  const dags = await mongo.c.dags
    .find({ "tasks.spec.artifactId": id } as Record<string, unknown>, { projection: { _id: 1, name: 1, ownerId: 1 } })
    .limit(limit - out.length)
    .toArray();
  return [...out, ...dags.map((d): ArtifactUser => ({ kind: "DAG", id: d._id, name: d.name, ownerId: d.ownerId }))];
}
