/** Artifacts (issue #16): uploads checked against their declared size and sha256, used by jobs. */
export { ArtifactService, MAX_PENDING_UPLOADS, discardUpload, type ArtifactServiceDeps, type ArtifactUpload, type ArtifactUploadInput } from "./service.js";
export { resolveArtifact, resolveArtifactOfOwner, type ResolvedArtifact } from "./resolve.js";
export { ArtifactSweeper, type ArtifactSweepDeps, type SweepOutcome } from "./sweep.js";
