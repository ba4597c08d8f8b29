/**
 * The states and kinds of the stored documents, as `as const` objects (one list of values each;
 * src/schema/enums.ts builds the GraphQL enums from them). The run lifecycle and its transition
 * table are in lifecycle.ts.
 */

export const UserRole = { ADMIN: "ADMIN", USER: "USER" } as const;
export type UserRole = (typeof UserRole)[keyof typeof UserRole];

export const ApiKeyScope = { READ_ONLY: "READ_ONLY", READ_WRITE: "READ_WRITE" } as const;
export type ApiKeyScope = (typeof ApiKeyScope)[keyof typeof ApiKeyScope];

/** What deleteUser does with the user's jobs. */
export const DeletedUserJobs = { KEEP: "KEEP", DELETE: "DELETE" } as const;
export type DeletedUserJobs = (typeof DeletedUserJobs)[keyof typeof DeletedUserJobs];

/**
 * What a job runs (docs/job-kinds.md): COMMAND a shell command or an argv; SCRIPT a script (inline
 * or an artifact) run by a named interpreter; BINARY an uploaded executable; HTTP one request made
 * by the executor itself (no process).
 */
export const SpecKind = { COMMAND: "COMMAND", SCRIPT: "SCRIPT", BINARY: "BINARY", HTTP: "HTTP" } as const;
export type SpecKind = (typeof SpecKind)[keyof typeof SpecKind];

/** NONE: no network at all (a namespace with only loopback). EGRESS: a route out, never to the node itself. */
export const NetworkAccess = { NONE: "NONE", EGRESS: "EGRESS" } as const;
export type NetworkAccess = (typeof NetworkAccess)[keyof typeof NetworkAccess];

/** ACTIVE while a job has future fires; COMPLETED when its schedule has no more slots. */
export const JobStatus = { ACTIVE: "ACTIVE", PAUSED: "PAUSED", COMPLETED: "COMPLETED" } as const;
export type JobStatus = (typeof JobStatus)[keyof typeof JobStatus];

export const RunTrigger = { SCHEDULE: "SCHEDULE", MANUAL: "MANUAL", RETRY: "RETRY", BACKFILL: "BACKFILL" } as const;
export type RunTrigger = (typeof RunTrigger)[keyof typeof RunTrigger];

/**
 * The one recorded outcome of a schedule slot (the fire ledger):
 * - `FIRED`: a run was created for the slot.
 * - `SKIPPED_OVERLAP`: the overlap policy (FORBID, or QUEUE_ONE with its place taken) refused it.
 * - `SKIPPED_PAUSED`: the slot came due while the job was paused.
 * - `MISSED`: the misfire policy did not run it (outside the catch-up window, collapsed by
 *   FIRE_ONCE, late under SKIP, over the FIRE_ALL cap).
 * - `SKIPPED_DST`: its wall time did not exist (spring forward) and the job says `dstGap: 'SKIP'`.
 * - `SKIPPED_BACKLOG`: the owner had as many runs waiting to start as `KAIROS_MAX_WAITING_RUNS`
 *   allows (core/runs/waiting.ts); no run was made, and the slot is not retried.
 */
export const FireOutcome = {
  FIRED: "FIRED",
  SKIPPED_OVERLAP: "SKIPPED_OVERLAP",
  SKIPPED_PAUSED: "SKIPPED_PAUSED",
  MISSED: "MISSED",
  SKIPPED_DST: "SKIPPED_DST",
  SKIPPED_BACKLOG: "SKIPPED_BACKLOG",
} as const;
export type FireOutcome = (typeof FireOutcome)[keyof typeof FireOutcome];

export const NodeStatus = { ONLINE: "ONLINE", DRAINING: "DRAINING", OFFLINE: "OFFLINE", DEAD: "DEAD" } as const;
export type NodeStatus = (typeof NodeStatus)[keyof typeof NodeStatus];

/** BUBBLEWRAP: every attempt in its own namespaces as an unprivileged user; NONE: plain processes. */
export const IsolationMode = { BUBBLEWRAP: "BUBBLEWRAP", NONE: "NONE" } as const;
export type IsolationMode = (typeof IsolationMode)[keyof typeof IsolationMode];
