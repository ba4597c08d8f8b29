/** Artifacts (issue #16): uploaded scripts and binaries, their states and their stored document. */

export const ArtifactStatus = {
  /** Created; its bytes are being uploaded to the presigned URL. Expires unless completed in time. */
  PENDING: "PENDING",
  /** Its size and sha256 were checked against the stored bytes: jobs may use it. */
  COMPLETE: "COMPLETE",
  /** Being deleted (refused while jobs use it; then back to COMPLETE). */
  DELETING: "DELETING",
} as const;
export type ArtifactStatus = (typeof ArtifactStatus)[keyof typeof ArtifactStatus];

export interface ArtifactDoc {
  _id: string;
  ownerId: string;
  /** The uploader's name for it (a file name, typically); not unique. */
  name: string;
  /** Declared at creation; checked against the stored bytes on completion. */
  size: number;
  /** Lowercase hex sha256, declared at creation; checked against the stored bytes on completion. */
  sha256: string;
  status: ArtifactStatus;
  /** Where the presigned PUT writes: `uploads/<id>`. Deleted on completion. */
  uploadKey: string;
  /** Where the verified bytes live once COMPLETE: `artifacts/<id>`, written by the API itself (no URL can write it). */
  blobKey: string | null;
  createdAt: Date;
  completedAt: Date | null;
  /** PENDING: when the upload expires (the sweep then deletes it and its bytes). Null once COMPLETE. */
  expiresAt: Date | null;
  /** DELETING: since when (a deletion stopped half-way by a crash is finished by the sweep after a while). */
  deletingAt?: Date | null;
  /** PENDING: a TTL backstop a day after expiresAt, should the sweep not run. Null once COMPLETE. */
  purgeAt: Date | null;
}
