/**
 * An artifact as jobs use it: only a COMPLETE one (its size and sha256 checked against the stored
 * bytes), and only the caller's own (an administrator's: anyone's). What the executor needs to
 * fetch and verify it is `ResolvedArtifact` (the executor's `ArtifactRef`).
 */
import { visible, type Principal } from "../../auth/index.js";
import { ArtifactStatus, NotFoundError, NotYoursError, ValidationError, type ArtifactDoc } from "../../domain/index.js";
import { findArtifact, type Mongo } from "../../store/index.js";

export interface ResolvedArtifact {
  id: string;
  sha256: string;
  size: number;
  blobKey: string;
}

/**
 * The artifact `artifactId` for a job of the caller: NOT_FOUND when it is missing or someone
 * else's, BAD_USER_INPUT (field `field`) when its upload is not complete.
 */
export async function resolveArtifact(mongo: Mongo, caller: Principal, artifactId: string, field = "spec.artifactId"): Promise<ResolvedArtifact> {
  const doc = visible(caller, "artifact", artifactId, await findArtifact(mongo, artifactId));
  return usable(doc, field);
}

/**
 * The artifact `artifactId` of a run of `ownerId` (the executor's check at run time: the artifact
 * must still be COMPLETE and belong to the run's owner).
 */
export async function resolveArtifactOfOwner(mongo: Mongo, ownerId: string, artifactId: string): Promise<ResolvedArtifact> {
  const doc = await findArtifact(mongo, artifactId);
  if (!doc) throw new NotFoundError("artifact", artifactId);
  if (doc.ownerId !== ownerId) throw new NotYoursError("artifact", artifactId);
  return usable(doc, "spec.artifactId");
}

function usable(doc: ArtifactDoc, field: string): ResolvedArtifact {
  if (doc.status !== ArtifactStatus.COMPLETE || !doc.blobKey) {
    const why =
      doc.status === ArtifactStatus.PENDING
        ? "its upload is not complete: PUT the bytes to the uploadUrl, then call completeArtifactUpload"
        : "it is being deleted";
    throw new ValidationError(field, `artifact ${doc._id} cannot be used: ${why}`);
  }
  return { id: doc._id, sha256: doc.sha256, size: doc.size, blobKey: doc.blobKey };
}
