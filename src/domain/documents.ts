/**
 * MongoDB document shapes (docs/design.md, "Data model"). Ids are 24-hex-digit strings (ObjectId text) so they pass
 * through GraphQL, logs and Redis unchanged. Instants are BSON dates; durations are milliseconds.
 */
import type { RunStatus } from "./lifecycle.js";
import type { MisfirePolicy, OverlapPolicy, RetryPolicy, Schedule } from "./policies.js";
import type { BinarySpec, HttpResponseRecord, HttpSpec, NodeInterpreter, ScriptSpec } from "./job-kinds.js";
import type { ApiKeyScope, FireOutcome, IsolationMode, JobStatus, NetworkAccess, NodeStatus, RunTrigger, SpecKind, UserRole } from "./statuses.js";



export interface UserDoc {
  _id: string;
  username: string;
  /** `scrypt$N$r$p$salt$hash` (base64 parts). */
  passwordHash: string;
  role: UserRole;
  /** Most runs of this user that may be RUNNING at once (enforced at dispatch). */
  maxConcurrentRuns: number | null;
  /**
   * The run slots taken under `maxConcurrentRuns`: one `runId:fencingToken` per RUNNING attempt.
   * A set rather than a counter, so taking and giving back a slot are idempotent; its size is
   * compared-and-set at claim time (core/runs/user-slots.ts).
   */
  runSlots?: string[];
  /**
   * Bumped to revoke every token issued before (revokeTokens, changePassword); tokens carry the
   * version they were issued with. Missing on older documents: 0.
   */
  tokenVersion?: number;
  /**
   * The secret HTTP jobs' requests are signed with (core/http-signing.ts), made on the first HTTP
   * run or by rotateHttpSigningSecret; the API shows it only when it is made. After a rotation
   * the previous one signs too, until `previousUntil`, so receivers can switch without a gap.
   */
  httpSigning?: { current: string; createdAt: Date; previous: string | null; previousUntil: Date | null } | null;
  /** A disabled user cannot log in, and their tokens and API keys are refused. */
  disabled?: boolean;
  /** Set when deletion starts: from then on the user is treated as gone; the document is removed when deletion ends. */
  deletedAt?: Date | null;
  createdAt: Date;
  updatedAt: Date;
}


/** A service account's credential. Only the SHA-256 of the key is stored; the key is shown once. */
export interface ApiKeyDoc {
  _id: string;
  ownerId: string;
  name: string;
  /** The key's first characters (`kairos_` and 6 more), so people can tell their keys apart. */
  prefix: string;
  /** Hex SHA-256 of the whole key. Unique. */
  hash: string;
  scope: ApiKeyScope;
  expiresAt: Date | null;
  /** Updated at most once a minute per key. */
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  createdBy: string;
  createdAt: Date;
}

/**
 * One idempotent submission: the first request with `{ownerId, key}` inserts it (unique index),
 * runs, and stores what it made; a repeat within 24 h gets that instead of a second run.
 */
export interface IdempotencyDoc {
  _id: string;
  ownerId: string;
  key: string;
  /** The mutation, e.g. `createJob`. */
  operation: string;
  /** SHA-256 of the operation's input: the same key with other input is a conflict. */
  fingerprint: string;
  state: "PENDING" | "DONE";
  /** While PENDING: after this instant a repeat may take the operation over (its first request died). */
  leaseUntil: Date;
  /** What the first request made: ids and counts, read back on a repeat. */
  result: Record<string, unknown> | null;
  createdAt: Date;
  /** TTL index; also checked on read (a TTL monitor deletes late). */
  expiresAt: Date;
}


/** What an attempt may use; enforced by the executor's sandbox (cgroup, rlimits, disk cap). */
export interface ResourceRequest {
  /** CPU cores, fractions allowed (a CFS quota). */
  cpu: number;
  memoryMb: number;
  /** Most processes and threads at once. */
  pids: number;
  /** Most bytes (MiB) in the run's working directory and /tmp together. */
  diskMb: number;
}


/**
 * What a job runs. COMMAND: `command` goes to `/bin/sh -c`; `argv` is executed directly (no shell).
 * SCRIPT, BINARY, HTTP: `script`, `binary`, `http` (domain/job-kinds.ts); absent on COMMAND specs
 * and on specs stored before these kinds existed.
 */
export interface JobSpec {
  kind: SpecKind;
  command: string | null;
  argv: string[] | null;
  script?: ScriptSpec | null;
  binary?: BinarySpec | null;
  http?: HttpSpec | null;
  /** The artifact a SCRIPT or BINARY runs, by id (deleteArtifact refuses while a job names one). */
  artifactId?: string | null;
  env: Record<string, string>;
  timeoutMs: number;
  pool: string;
  /** Absent on specs stored before resources existed: the defaults apply (core/resources.ts). */
  resources?: ResourceRequest;
  /** Absent means NONE. */
  network?: NetworkAccess;
}


export interface JobDoc {
  _id: string;
  ownerId: string;
  name: string;
  description: string | null;
  tags: string[];
  spec: JobSpec;
  /**
   * Never stored: set on a job the API read without its spec's text (its command, argv, env,
   * script source and args, HTTP body and headers: store/jobs/user-reads.ts), which the request
   * reads on its own when it asks for it (core/lookups.ts).
   */
  specTextOmitted?: true;
  schedule: Schedule;
  priority: number;
  retry: RetryPolicy;
  overlap: OverlapPolicy;
  misfire: MisfirePolicy;
  catchupWindowMs: number;
  paused: boolean;
  pausedAt: Date | null;
  /** ACTIVE while it has future fires; COMPLETED when its schedule has no more slots. */
  status: JobStatus;
  /**
   * The job's run that ended last by its scheduled time (core/runs/transitions.ts writes it as a
   * run ends; store/jobs/last-run.ts): absent until one has ended. How the job went, where
   * `status` only says whether fires are still to come.
   */
  lastRun?: JobLastRun | null;
  /** The nominal instant of the next slot (its identity), or null when none is armed. */
  nextSlotAt: Date | null;
  /** When the next slot is due on the wheel: nextSlotAt plus spread and jitter. Indexed. */
  nextFireAt: Date | null;
  /**
   * Overlap lock (policies other than ALLOW): the run that currently occupies the job, and the one
   * held PENDING behind it (QUEUE_ONE). Taken and released by compare-and-set on this document.
   */
  activeRunId: string | null;
  pendingRunId: string | null;
  /** Set by rescheduleJob on a recurring job: fire once at this instant, then continue the schedule. */
  rescheduledTo: Date | null;
  /** The latest slot that has an outcome in the fire ledger. */
  lastSlotAt: Date | null;
  /** Slots at or before this instant have an outcome (or predate the job): the planning cursor. */
  handledThrough: Date;
  firedCount: number;
  /** Marker of the scheduler's last batched update (store/batch.ts UpdateBatcher); nothing else writes it. */
  schedulerOp?: string;
  /** Set when the owner was deleted and the admin kept the job (paused; it cannot be resumed or triggered). */
  ownerDeleted?: boolean;
  /** Bumped by every user edit; the scheduler's writes are conditional on it. */
  version: number;
  /**
   * Set on a DAG's timer: the hidden job that carries a scheduled DAG's schedule (its `_id` is the
   * DAG's id). Its fires create DAG runs instead of runs (docs/dags.md, "Schedules").
   */
  dagId?: string | null;
  /** W3C trace context of the request that created the job, when tracing is on: its first fire continues that trace. */
  traceparent?: string | null;
  createdAt: Date;
  updatedAt: Date;
}


/**
 * A run that ended, as its job keeps it (JobDoc.lastRun). Ordered by (scheduledFor, runId): a run
 * ending after a later-scheduled one does not replace it; the same run ending again (retried) does.
 */
export interface JobLastRun {
  runId: string;
  /** A final status: SUCCEEDED, FAILED, TIMED_OUT, CANCELLED or DEAD (never a withdrawn run). */
  status: RunStatus;
  trigger: RunTrigger;
  scheduledFor: Date;
  finishedAt: Date | null;
}

export interface RunTransition {
  status: RunStatus;
  at: Date;
  reason: string | null;
  nodeId: string | null;
  attempt: number | null;
}

export interface RunDoc {
  _id: string;
  ownerId: string;
  jobId: string;
  jobName: string;
  /** `jobId@<slot ms>` for scheduled fires, `jobId@manual:<id>` for triggers; unique. */
  fireKey: string;
  trigger: RunTrigger;
  scheduledFor: Date;
  status: RunStatus;
  /** 1-based attempt number of the current or last attempt. */
  attempt: number;
  /** The job's retry policy when the run was created. */
  retry: RetryPolicy;
  /** The job's overlap policy when the run was created (decides whether it holds the job's lock). */
  overlap: OverlapPolicy;
  /** Bumped by every claim; every later write of the attempt must present it. */
  fencingToken: number;
  priority: number;
  pool: string;
  /** The job's spec when the run was created: later job edits do not change a materialised run. */
  spec: JobSpec;
  nodeId: string | null;
  /**
   * The node lease epoch the claim was made under (see NodeDoc.leaseEpoch): while it is not ended,
   * the node's heartbeat keeps this attempt's lease; absent on runs claimed before node leases
   * (their own `leaseUntil` is renewed and decides, as it did).
   */
  nodeEpoch?: number | null;
  /**
   * When the attempt's lease ends: set by the claim (claim time + the node's lease). A run with a
   * `nodeEpoch` keeps it from the claim (the node's lease carries it after); one without has it
   * renewed by its executor.
   */
  leaseUntil: Date | null;
  /** The owner's run slot this attempt holds (`runId:fencingToken`), when the owner has a limit. */
  userSlot?: string | null;
  /**
   * QUEUED but parked out of the ready queue: its owner was at `maxConcurrentRuns` when an
   * executor tried to claim it. Put back in the queue when one of the owner's slots frees up.
   */
  heldByLimit?: boolean;
  /** When it was last parked by its owner's concurrency limit (`heldByLimit`); kept after it is woken. */
  heldAt?: Date | null;
  /** Marker of the last batched transition (store/batch.ts UpdateBatcher); nothing else writes it. */
  batchOp?: string;
  /** Which batch claim made the current attempt RUNNING (see RunService.claimMany). */
  claimId?: string | null;
  cancelRequested: boolean;
  /**
   * Set on a run staged ahead of its fire time and taken back before it (a pause, an edit, a new
   * schedule: core/runs/staged.ts): stored CANCELLED, reported WITHDRAWN (domain/lifecycle.ts).
   */
  withdrawn?: boolean;
  /**
   * Set on a run staged ahead of its fire time (the scheduler's stage-ahead window): executors
   * do not take it before this instant (the slot's due time, with spread and jitter).
   */
  notBefore?: Date | null;
  queuedAt: Date | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** When RETRY_SCHEDULED: the next attempt's due time. */
  retryAt: Date | null;
  exitCode: number | null;
  signal: string | null;
  error: string | null;
  outputTail: string | null;
  outputTruncated: boolean;
  /** HTTP jobs: what the last attempt's request got back (null when it got no response). */
  httpResponse?: HttpResponseRecord | null;
  /** What the last attempt used, where the node measures it (a cgroup). */
  usage?: RunUsage | null;
  history: RunTransition[];
  /** Set on a DAG task instance's run: its DAG run, its task's key and, for a mapped task, its index. */
  dagRunId?: string | null;
  taskKey?: string | null;
  mapIndex?: number | null;
  /** The JSON text a DAG task wrote to KAIROS_RESULT (at most 64 KiB), when its attempt succeeded. */
  resultJson?: string | null;
  /** W3C trace context of the span that created the run (its fire), when tracing is on: the executor's spans join that trace. */
  traceparent?: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface RunUsage {
  peakMemoryMb: number | null;
  cpuSeconds: number | null;
}


/** The fire ledger: exactly one outcome per slot of a schedule (`_id` = fireKey). */
export interface FireDoc {
  _id: string;
  jobId: string;
  ownerId: string;
  slotAt: Date;
  outcome: FireOutcome;
  runId: string | null;
  /** How late the slot was handled (ms after its nominal instant). */
  latenessMs: number | null;
  reason: string | null;
  recordedAt: Date;
}

/** How a node runs jobs: what it enforces, said at start and shown in `nodes { isolation }`. */
export interface NodeIsolation {
  /** BUBBLEWRAP: every attempt in its own namespaces as an unprivileged user; NONE: plain processes. */
  mode: IsolationMode;
  /** The limits and protections this node enforces, e.g. "namespaces", "cgroup:memory", "rlimit:fsize". */
  enforced: string[];
  /** Network modes a job may ask for on this node. */
  network: NetworkAccess[];
  /** Why something is not enforced, when it is not. */
  notes: string[];
}


export interface NodeDoc {
  _id: string;
  name: string;
  host: string;
  pid: number;
  pools: string[];
  labels: Record<string, string>;
  capacity: { slots: number; cpus: number; memoryMb: number };
  /** The largest resources one run may ask for on this node, and its isolation. */
  maxRun?: ResourceRequest;
  /** What a run of this node's pools gets when its job leaves a resource out. */
  defaultRun?: ResourceRequest;
  isolation?: NodeIsolation;
  /** SCRIPT interpreters this node has; absent on nodes of an older version (none). */
  interpreters?: NodeInterpreter[];
  status: NodeStatus;
  running: number;
  usage: { cpuPercent: number; memoryMb: number; load1: number };
  startedAt: Date;
  lastHeartbeatAt: Date;
  /**
   * The node lease (docs/decisions.md, "One lease document per node"): one per executor process,
   * renewed by its heartbeat (`leaseUntil` moves only while `leaseEpoch` is the one the executor
   * holds and not `leaseEnded`). Every RUNNING run claimed under an epoch lives while that epoch
   * does. A scheduler ends an epoch whose `leaseUntil` passed (a compare-and-set a late renewal
   * loses or beats, never both), then queues its runs again; the executor, finding its epoch
   * ended, kills those attempts and takes the next epoch. Absent on nodes of an older version.
   */
  leaseEpoch?: number;
  leaseUntil?: Date;
  leaseEnded?: boolean;
  /** The executor's lease length (ms): how long after an end claims under it may still land. */
  leaseMs?: number;
  /**
   * Set by the end of an epoch: every RUNNING run of this node with `nodeEpoch <= reclaimThrough`
   * is queued again; the node is looked at until `reclaimUntil` (a lease after the end: a claim
   * sent under the epoch just before it ended may land that late), then cleared (null).
   */
  reclaimThrough?: number;
  /** The end of the lease that lapsed (when its runs were lost). */
  reclaimFrom?: Date;
  reclaimUntil?: Date | null;
}
