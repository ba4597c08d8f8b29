import { registerEnumType } from "type-graphql";

// GraphQL enums mirror the domain's string unions; the values are the same strings.
export enum Role { ADMIN = "ADMIN", USER = "USER" }
export enum ScheduleKind { ONCE = "ONCE", INTERVAL = "INTERVAL", CRON = "CRON" }
export enum DstGapPolicy { SHIFT = "SHIFT", SKIP = "SKIP" }
export enum DstRepeatPolicy { FIRST = "FIRST", LAST = "LAST", BOTH = "BOTH" }
export enum OverlapPolicy { ALLOW = "ALLOW", FORBID = "FORBID", QUEUE_ONE = "QUEUE_ONE", REPLACE = "REPLACE" }
export enum MisfirePolicy { FIRE_ONCE = "FIRE_ONCE", FIRE_ALL = "FIRE_ALL", SKIP = "SKIP" }
export enum BackoffKind { FIXED = "FIXED", EXPONENTIAL = "EXPONENTIAL" }
export enum RetryJitter { NONE = "NONE", FULL = "FULL", EQUAL = "EQUAL" }
export enum SpecKind { COMMAND = "COMMAND" }
export enum JobStatus { ACTIVE = "ACTIVE", PAUSED = "PAUSED", COMPLETED = "COMPLETED" }
export enum RunStatus {
  PENDING = "PENDING",
  QUEUED = "QUEUED",
  RUNNING = "RUNNING",
  SUCCEEDED = "SUCCEEDED",
  FAILED = "FAILED",
  TIMED_OUT = "TIMED_OUT",
  CANCELLED = "CANCELLED",
  RETRY_SCHEDULED = "RETRY_SCHEDULED",
  DEAD = "DEAD",
  /** Reported only (stored as RUNNING with cancelRequested): see the enum's description. */
  CANCELLING = "CANCELLING",
}
export enum ApiKeyScope { READ_ONLY = "READ_ONLY", READ_WRITE = "READ_WRITE" }
export enum DeletedUserJobs { KEEP = "KEEP", DELETE = "DELETE" }
export enum RunTrigger { SCHEDULE = "SCHEDULE", MANUAL = "MANUAL", RETRY = "RETRY", BACKFILL = "BACKFILL" }
export enum FireOutcome {
  FIRED = "FIRED",
  SKIPPED_OVERLAP = "SKIPPED_OVERLAP",
  SKIPPED_PAUSED = "SKIPPED_PAUSED",
  MISSED = "MISSED",
  SKIPPED_DST = "SKIPPED_DST",
}
export enum NodeStatus { ONLINE = "ONLINE", DRAINING = "DRAINING", OFFLINE = "OFFLINE", DEAD = "DEAD" }

registerEnumType(Role, { name: "Role", description: "ADMIN sees and changes everything; USER only their own jobs and runs." });
registerEnumType(ScheduleKind, { name: "ScheduleKind" });
registerEnumType(DstGapPolicy, {
  name: "DstGapPolicy",
  description: "A local time that does not exist (spring forward).",
  valuesConfig: {
    SHIFT: { description: "Run at the first valid instant after the gap (default)." },
    SKIP: { description: "Do not run for that local time." },
  },
});
registerEnumType(DstRepeatPolicy, {
  name: "DstRepeatPolicy",
  description: "A local time that happens twice (fall back).",
  valuesConfig: {
    FIRST: { description: "Run at the first occurrence only (default)." },
    LAST: { description: "Run at the last occurrence only." },
    BOTH: { description: "Run at both occurrences." },
  },
});
registerEnumType(OverlapPolicy, {
  name: "OverlapPolicy",
  description: "What a fire does while the job's previous run is still active.",
  valuesConfig: {
    ALLOW: { description: "Start anyway; runs may overlap (default)." },
    FORBID: { description: "Skip this fire (recorded as SKIPPED_OVERLAP)." },
    QUEUE_ONE: { description: "Keep at most one run PENDING behind the active one." },
    REPLACE: { description: "Cancel the active run and start this one." },
  },
});
registerEnumType(MisfirePolicy, {
  name: "MisfirePolicy",
  description: "What happens to fires missed while the scheduler was down or behind.",
  valuesConfig: {
    FIRE_ONCE: { description: "One run for all missed fires within the catch-up window (default)." },
    FIRE_ALL: { description: "A run for every missed fire within the window, up to a cap." },
    SKIP: { description: "Run none of them; continue with the next fire." },
  },
});
registerEnumType(BackoffKind, { name: "BackoffKind" });
registerEnumType(RetryJitter, { name: "RetryJitter" });
registerEnumType(SpecKind, { name: "SpecKind", description: "What a job runs. Scripts, binaries and HTTP calls come later." });
registerEnumType(JobStatus, { name: "JobStatus" });
registerEnumType(RunStatus, {
  name: "RunStatus",
  valuesConfig: {
    CANCELLING: {
      description:
        "cancelRun was asked for a RUNNING run: its executor is killing the process group; the run then ends CANCELLED " +
        "(or, if it finished first, with its own result). Stored as RUNNING with cancelRequested: true; filter runs by CANCELLING to find them.",
    },
  },
});
registerEnumType(ApiKeyScope, {
  name: "ApiKeyScope",
  valuesConfig: {
    READ_ONLY: { description: "Queries and subscriptions only; every mutation answers FORBIDDEN." },
    READ_WRITE: { description: "Everything the key's owner may do, except managing credentials (API keys, password)." },
  },
});
registerEnumType(DeletedUserJobs, {
  name: "DeletedUserJobs",
  description: "What deleteUser does with the user's jobs. Either way they stop firing and their open runs are cancelled.",
  valuesConfig: {
    KEEP: { description: "Keep them, paused and marked ownerDeleted, for reference (they cannot run again)." },
    DELETE: { description: "Delete them." },
  },
});
registerEnumType(RunTrigger, { name: "RunTrigger" });
registerEnumType(FireOutcome, { name: "FireOutcome", description: "The one recorded outcome of a schedule slot." });
registerEnumType(NodeStatus, { name: "NodeStatus" });

export enum NetworkAccess {
  NONE = "NONE",
  EGRESS = "EGRESS",
}
export enum IsolationMode {
  BUBBLEWRAP = "BUBBLEWRAP",
  NONE = "NONE",
}
registerEnumType(NetworkAccess, {
  name: "NetworkAccess",
  description: "NONE: no network (only the run's own loopback). EGRESS: a route out that never reaches the node itself.",
});
registerEnumType(IsolationMode, {
  name: "IsolationMode",
  description: "BUBBLEWRAP: every attempt in its own namespaces as an unprivileged user. NONE: plain processes (KAIROS_SANDBOX=none, or dev without bubblewrap).",
});
