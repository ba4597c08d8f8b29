/**
 * The GraphQL enums ARE the domain's `as const` objects (src/domain/statuses.ts, policies.ts,
 * lifecycle.ts): each is registered here with its GraphQL name and descriptions, and re-exported
 * under that name for the schema classes. No value list is written here, except the one value
 * only the API reports (RunStatus.CANCELLING).
 *
 * type-graphql reads such an object with `Object.keys` (keys that are not numbers) and keys its
 * enum registry by the object's identity, so each domain object is registered exactly once.
 */
import { registerEnumType } from "type-graphql";
import { AlertDeliveryStatus, AlertEvent } from "../domain/index.js";
import { DagRunStatus, DagTaskState, GraphFormat, TriggerRule } from "../domain/index.js";
import { ArtifactStatus, ReportedRunStatus } from "../domain/index.js";
import {
  Backoff,
  DstGapPolicy,
  DstRepeatPolicy,
  MisfirePolicy,
  OverlapPolicy,
  RetryJitter,
  ScheduleKind,
} from "../domain/index.js";
import {
  ApiKeyScope,
  DeletedUserJobs,
  FireOutcome,
  IsolationMode,
  JobStatus,
  LogState,
  LogStream,
  NetworkAccess,
  NodeStatus,
  RunTrigger,
  SpecKind,
  UserRole,
} from "../domain/index.js";


// The schema's names for them (the GraphQL names where they differ from the domain's).
export {
  UserRole as Role,
  ScheduleKind,
  DstGapPolicy,
  DstRepeatPolicy,
  OverlapPolicy,
  MisfirePolicy,
  Backoff as BackoffKind,
  RetryJitter,
  SpecKind,
  JobStatus,
  ReportedRunStatus as RunStatus,
  ApiKeyScope,
  DeletedUserJobs,
  RunTrigger,
  FireOutcome,
  NodeStatus,
  NetworkAccess,
  IsolationMode,
  TriggerRule,
  DagTaskState,
  DagRunStatus,
  GraphFormat,
  ArtifactStatus,
  LogStream,
  LogState,
};

registerEnumType(UserRole, { name: "Role", description: "ADMIN sees and changes everything; USER only their own jobs and runs." });
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
registerEnumType(Backoff, { name: "BackoffKind" });
registerEnumType(RetryJitter, { name: "RetryJitter" });
registerEnumType(SpecKind, { name: "SpecKind", description: "What a job runs. Scripts, binaries and HTTP calls come later." });
registerEnumType(JobStatus, { name: "JobStatus" });
registerEnumType(ReportedRunStatus, {
  name: "RunStatus",
  valuesConfig: {
    CANCELLING: {
      description:
        "cancelRun was asked for a RUNNING run: its executor is killing the process group; the run then ends CANCELLED " +
        "(or, if it finished first, with its own result). Stored as RUNNING with cancelRequested: true; filter runs by CANCELLING to find them.",
    },
    QUEUED: { description: "Waiting in its pool's queue for an executor slot (its time has come)." },
    SCHEDULED: {
      description:
        "Staged ahead of its fire time (KAIROS_STAGE_AHEAD): its slot fired and the run exists, but no executor takes it before notBefore. " +
        "From then on it reads QUEUED; no event marks that instant (the next one is RUNNING). Filter runs by SCHEDULED, or leave them out with filter.staged: false.",
    },
    CANCELLED: { description: "Cancelled by a user or by the system (a deleted job or owner, overlap REPLACE). Runs taken back before their fire time are WITHDRAWN instead." },
    WITHDRAWN: {
      description:
        "A run staged ahead of its fire time and taken back before it, because its job was paused, edited or rescheduled: it never ran, and its slot " +
        "was judged again under the job as it is now (see the job's fires). Final; runs lists leave these out unless status is WITHDRAWN.",
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
  description: "What deleteUser does with the user's jobs. Either way they stop firing and their open runs are cancelled. DAGs are deleted either way.",
  valuesConfig: {
    KEEP: { description: "Keep them, paused and marked ownerDeleted, for reference (they cannot run again)." },
    DELETE: { description: "Delete them." },
  },
});
registerEnumType(RunTrigger, { name: "RunTrigger" });
registerEnumType(FireOutcome, {
  name: "FireOutcome",
  description: "The one recorded outcome of a schedule slot.",
  valuesConfig: {
    FIRED: { description: "A run (a DAG run, for a DAG) was created for the slot." },
    SKIPPED_OVERLAP: { description: "The overlap policy (FORBID, or QUEUE_ONE with its place taken) refused it." },
    SKIPPED_PAUSED: { description: "The slot came due while the job was paused." },
    MISSED: { description: "The misfire policy did not run it (outside the catch-up window, collapsed by FIRE_ONCE, late under SKIP, over the FIRE_ALL cap)." },
    SKIPPED_DST: { description: "Its wall time did not exist (spring forward) and the job says dstGap SKIP." },
    SKIPPED_BACKLOG: {
      description: "The owner had as many runs waiting to start (QUEUED or PENDING) as KAIROS_MAX_WAITING_RUNS allows: no run was made, and the slot is not retried.",
    },
  },
});
registerEnumType(NodeStatus, { name: "NodeStatus" });
registerEnumType(NetworkAccess, {
  name: "NetworkAccess",
  description: "NONE: no network (only the run's own loopback). EGRESS: a route out that never reaches the node itself.",
});
registerEnumType(IsolationMode, {
  name: "IsolationMode",
  description: "BUBBLEWRAP: every attempt in its own namespaces as an unprivileged user. NONE: plain processes (KAIROS_SANDBOX=none, or dev without bubblewrap).",
});

registerEnumType(TriggerRule, { name: "TriggerRule", description: "When a DAG task runs, given its parents' states (docs/dags.md). Default ALL_SUCCESS." });
registerEnumType(DagTaskState, { name: "DagTaskState", description: "The state of a DAG task (or of one instance of a mapped task) in a DAG run." });
registerEnumType(DagRunStatus, { name: "DagRunStatus", description: "RUNNING until no task can move any more; then SUCCEEDED, FAILED or CANCELLED." });
registerEnumType(GraphFormat, { name: "GraphFormat", description: "MERMAID (a flowchart for Markdown) or DOT (Graphviz)." });
registerEnumType(LogStream, {
  name: "LogStream",
  valuesConfig: {
    STDOUT: { description: "The program's standard output." },
    STDERR: { description: "The program's standard error." },
    SYSTEM: { description: "Kairos's own note in the log (the truncation marker)." },
  },
});
registerEnumType(LogState, {
  name: "LogState",
  valuesConfig: {
    LIVE: { description: "Being written, or ended and waiting for its archive: read with logs(...) or runLogs." },
    ARCHIVING: { description: "Its archive is being written." },
    ARCHIVED: { description: "In the blob store: logUrl downloads it (gzip); logs(...) still reads it." },
    EXPIRED: { description: "Deleted by the log retention (KAIROS_LOG_RETENTION); reason says when." },
  },
});
registerEnumType(ArtifactStatus, {
  name: "ArtifactStatus",
  valuesConfig: {
    PENDING: { description: "Created; PUT its bytes to the uploadUrl, then call completeArtifactUpload before the upload expires." },
    COMPLETE: { description: "Its bytes were checked against the declared size and sha256: jobs may use it." },
    DELETING: { description: "deleteArtifact is under way." },
  },
});

// Alerts (docs/alerts.md).
export { AlertEvent, AlertDeliveryStatus };
registerEnumType(AlertEvent, {
  name: "AlertEvent",
  description: "What an alert rule listens to (docs/alerts.md).",
  valuesConfig: {
    RUN_FAILED: { description: "A run ended FAILED (no retries configured, or a failure not retried)." },
    RUN_DEAD: { description: "A run spent its retries and ended DEAD (a dead letter)." },
    RUN_TIMED_OUT: { description: "A run ended TIMED_OUT." },
    RUN_OOM_KILLED: { description: "A run's last attempt was killed for exceeding its memory limit (it ended FAILED or DEAD)." },
    RECOVERED: { description: "A job (or a DAG's task runs) succeeded after a run of it failed." },
    FIRE_MISSED: { description: "A slot the misfire policy did not run (the fire ledger's MISSED)." },
    FIRE_SKIPPED: { description: "A slot skipped: SKIPPED_OVERLAP, SKIPPED_PAUSED, SKIPPED_DST or SKIPPED_BACKLOG." },
    DEADLINE_MISSED: { description: "A slot's run not finished `deadline` after its scheduled time (or no run made for it)." },
    FAILURE_RATE: { description: "The failed share of the runs that ended in `failureRate.window` reached `failureRate.threshold`." },
    NODE_LOST: { description: "An executor node stopped heartbeating and was marked DEAD (cluster-wide rules only)." },
    QUEUE_LATENESS: { description: "A run still waiting to start `queueLateness` after it was due." },
    SCHEDULE_SILENT: { description: "The watched recurring job or scheduled DAG has had no successful run for `silentFor` (since its last success, or since the rule was made)." },
    SCHEDULE_SILENT_RESOLVED: {
      description: "Sent, not named in `on`: a silence a SCHEDULE_SILENT rule reported ended with a successful run (the rule on SCHEDULE_SILENT sends it; once per silence).",
    },
  },
});
registerEnumType(AlertDeliveryStatus, {
  name: "AlertDeliveryStatus",
  valuesConfig: {
    PENDING: { description: "Waiting for its next attempt (nextAttemptAt)." },
    SENDING: { description: "An attempt is in flight." },
    DELIVERED: { description: "The receiver answered 2xx." },
    FAILED: { description: "Given up: a 4xx other than 408/425/429, a refused address, or every attempt failed." },
  },
});
